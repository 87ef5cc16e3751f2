/**
 * A copy of a value that `JSON.stringify` can always write. A `--transform` may return anything: a
 * cycle or a BigInt made `JSON.stringify` throw and ended the whole run on one bad row, and a getter
 * that throws did the same. The copy has the same JSON as the value wherever the value has one:
 * a cycle becomes "[Circular]", a BigInt its decimal digits, a property that cannot be read
 * "[Unreadable]", and nesting deeper than {@link MAX_SAFE_DEPTH} "[Too deep]".
 */
const MAX_SAFE_DEPTH = 32;

export function jsonSafe(value: unknown): unknown {
  return copy(value, [], 0);
}

function copy(value: unknown, ancestors: object[], depth: number): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.includes(value)) return '[Circular]';
  if (depth >= MAX_SAFE_DEPTH) return '[Too deep]';
  let own: object = value;
  try {
    // A Date or any toJSON: what JSON.stringify would have written, made safe in turn.
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      const replaced: unknown = toJSON.call(value, '');
      if (replaced === null || typeof replaced !== 'object') return copy(replaced, ancestors, depth);
      own = replaced;
    }
  } catch {
    return '[Unreadable]';
  }
  ancestors.push(value);
  try {
    if (Array.isArray(own)) return own.map((item) => copy(item, ancestors, depth + 1));
    const out: Record<string, unknown> = {};
    let keys: string[];
    try {
      keys = Object.keys(own);
    } catch {
      return '[Unreadable]';
    }
    for (const key of keys) {
      let item: unknown;
      try {
        item = (own as Record<string, unknown>)[key];
      } catch {
        item = '[Unreadable]';
      }
      Object.defineProperty(out, key, {
        value: copy(item, ancestors, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    ancestors.pop();
  }
}
