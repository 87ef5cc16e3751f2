import { MAX_JSON_DEPTH, TOO_DEEP } from './redact.js';

/**
 * A parsed JSON value with every value nested deeper than {@link MAX_JSON_DEPTH} replaced by
 * {@link TOO_DEEP}. JSON.parse accepts any depth, but a hostile answer nesting tens of thousands of
 * arrays overflows the stack of every recursive walk after it: `JSON.stringify` of an error that
 * carries it, `util.inspect`, structuredClone. Returns `value` itself when nothing is that deep.
 */
function limitJsonDepth(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const limited = limitJsonDepth(item, depth + 1);
      if (limited === item) return;
      copy ??= [...value];
      copy[i] = limited;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const limited = limitJsonDepth(item, depth + 1);
    if (limited === item) continue;
    copy ??= { ...value };
    // defineProperty: a key named "__proto__" must stay a key.
    Object.defineProperty(copy, key, { value: limited, enumerable: true, writable: true, configurable: true });
  }
  return copy ?? value;
}

/** Parses JSON, any value; deeper than {@link MAX_JSON_DEPTH} is replaced (see {@link limitJsonDepth}). */
export function parseJsonBounded(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: limitJsonDepth(JSON.parse(text)) };
  } catch {
    return { ok: false };
  }
}

/**
 * Parses a JSON object; anything else (invalid JSON, an array, a string, null) is undefined.
 * Values deeper than {@link MAX_JSON_DEPTH} are replaced (see {@link limitJsonDepth}).
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const parsed = parseJsonBounded(text);
  if (!parsed.ok) return undefined;
  const { value } = parsed;
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * Whether JSON text nests arrays and objects deeper than `max`, found by one pass over the text
 * (no recursion, so any depth is safe to ask about). Brackets inside strings do not count.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth++;
      if (depth > max) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}
