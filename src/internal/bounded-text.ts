/**
 * Text from an answer, cut for a message. A hostile service chooses its keys, hosts and messages;
 * an error that repeats them whole could be megabytes long, in every log line that prints it.
 */

/** At most `maxChars` characters of `text`, with `…` where it was cut. */
export function clipped(text: string, maxChars = 100): string {
  if (text.length <= maxChars) return text;
  // Never cut a surrogate pair in half: the half would print as a replacement character.
  const end = /[\ud800-\udbff]/.test(text.charAt(maxChars - 1)) ? maxChars - 1 : maxChars;
  return `${text.slice(0, end)}…`;
}

/** `text` clipped and quoted as a JSON string, so that quotes and control characters in it show escaped. */
export function quotedClip(text: string, maxChars = 100): string {
  return JSON.stringify(clipped(text, maxChars));
}
