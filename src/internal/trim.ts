/**
 * `text` without the trailing `/` characters. Written as a loop because `/\/+$/` is quadratic: the
 * regex engine tries the run of slashes from every position in it, and a URL taken from the
 * environment or a configuration file may hold a long one.
 */
export function trimTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}
