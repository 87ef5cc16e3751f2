/**
 * The one way the CLI writes text for a person. Much of what it prints was chosen by someone else:
 * a service's error message, a storage host's XML, a line of an input file, a file name. A terminal
 * obeys the control characters in such text: ESC sequences clear the screen, retitle the window or
 * forge OSC 8 links, `\r` hides what came before on the line, bidi overrides reorder what is read.
 * Every such character is shown escaped instead (`\x1b`, `\r`, `\u202e`), so the person sees what
 * was sent and the terminal obeys only the CLI.
 *
 * Machine output (the `--json` report) is written with {@link writeJsonLine}: exact JSON, whose
 * strings parse back to the very text the service sent, with the characters `JSON.stringify`
 * leaves raw written as `\u` escapes, since the report too may land on a terminal.
 */
import type { Writable } from 'node:stream';

/**
 * C0 and C1 controls and DEL (`\p{Cc}`), invisible format characters (`\p{Cf}`: bidi embeddings,
 * overrides and isolates, zero-width characters, soft hyphens, tag characters) and the Unicode
 * line and paragraph separators, which some terminals and viewers break lines at. One class, no
 * alternation: linear in the text whatever it holds.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const UNSAFE_EXCEPT_NEWLINE = /[^\n\P{Cc}]|[\p{Cf}\p{Zl}\p{Zp}]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

/**
 * One line for a terminal: every control and format character escaped, newlines included, so text
 * from outside can neither steer the terminal nor forge a line of its own.
 */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/**
 * A block for a terminal: like {@link terminalLine}, but `\n` is kept, for text whose line breaks
 * the CLI wrote itself (a summary table, a stack trace, commander's usage text).
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE_EXCEPT_NEWLINE, escaped);
}

/**
 * Writes to a stream that is still open. One whose reader went away (a closed pipe or terminal) was
 * destroyed by its write error (see closed-outputs.ts), and what is meant for it is dropped.
 */
function writeIfOpen(stream: Writable, text: string): void {
  if (!stream.destroyed) stream.write(text);
}

/** Writes a block of human text (lines joined by `\n`) and a final newline, escaped by {@link terminalText}. */
export function writeHuman(stream: Writable, text: string): void {
  writeIfOpen(stream, `${terminalText(text)}\n`);
}

/** Writes one human line and its newline, escaped by {@link terminalLine}. */
export function writeHumanLine(stream: Writable, line: string): void {
  writeIfOpen(stream, `${terminalLine(line)}\n`);
}

/**
 * Writes an error's stack trace (`--verbose`). Its head repeats the message, which may hold text
 * from outside with newlines of its own: the head is one escaped line, the frames below keep theirs.
 */
export function writeStack(stream: Writable, error: Error): void {
  const stack = error.stack ?? '';
  const head = `${error.name}: ${error.message}`;
  if (stack.startsWith(head)) writeHuman(stream, `${terminalLine(head)}${terminalText(stack.slice(head.length))}`);
  else writeHuman(stream, stack);
}

/** Writes a block that brings its own newlines (commander's help and usage, the emulator's banner), escaped by {@link terminalText}. */
export function writeHumanRaw(stream: Writable, text: string): void {
  writeIfOpen(stream, terminalText(text));
}

/**
 * What `JSON.stringify` leaves raw but a terminal may act on: DEL, C1 controls and the format and
 * separator characters. JSON text holds non-ASCII characters only inside strings, where `\uXXXX`
 * means the same character, so the document parses to the same value.
 */
const JSON_UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** `\uXXXX` for each UTF-16 unit: a character beyond the BMP (a tag character) becomes its surrogate pair. */
function jsonEscaped(char: string): string {
  let escapedUnits = '';
  for (let i = 0; i < char.length; i++) escapedUnits += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return escapedUnits;
}

/** One JSON document with what a terminal could act on escaped: exact JSON, parsing to exactly `value`. */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(JSON_UNSAFE, jsonEscaped);
}

/** Writes one JSON document on its own line: machine output, exact JSON, parsing to exactly `value`. */
export function writeJsonLine(stream: Writable, value: unknown): void {
  writeIfOpen(stream, `${terminalSafeJson(value)}\n`);
}
