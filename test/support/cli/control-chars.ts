/**
 * What the CLI must never let reach a terminal raw: C0 controls but the newline, DEL, C1
 * controls, soft hyphens, zero-width and bidi characters, line separators, the BOM and tag
 * characters. Built from a string so that the pattern itself holds no control character.
 */
export const RAW_TERMINAL_CONTROL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find control characters
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\u{e0000}-\u{e007f}]/u;

/** The first raw control character in a text with its position, for a readable failure; undefined when there is none. */
export function firstRawControl(text: string): string | undefined {
  const match = RAW_TERMINAL_CONTROL.exec(text);
  if (match === null) return undefined;
  const code = match[0].codePointAt(0)?.toString(16);
  return `U+${code} at ${match.index}: ${JSON.stringify(text.slice(Math.max(0, match.index - 40), match.index + 40))}`;
}
