/**
 * The one way the CLI writes text for a person. Much of what it prints was chosen by someone else:
 * a service's error message, a storage host's XML, a line of an input file, a file name. A terminal
 * obeys the control characters in such text: ESC sequences clear the screen, retitle the window or
 * forge OSC 8 links, `\r` hides what came before on the line, bidi overrides reorder what is read.
 * Every such character is shown escaped instead (`\x1b`, `\r`, `\u202e`), so the person sees what
 * was sent and the terminal obeys only the CLI.
 *
 * Machine output (the `--json` report) is written with {@link writeJsonLine}: `JSON.stringify`
 * already escapes every C0 character, and the report stays exact JSON.
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

/** Writes a block of human text (lines joined by `\n`) and a final newline, escaped by {@link terminalText}. */
export function writeHuman(stream: Writable, text: string): void {
  stream.write(`${terminalText(text)}\n`);
}

/** Writes one human line and its newline, escaped by {@link terminalLine}. */
export function writeHumanLine(stream: Writable, line: string): void {
  stream.write(`${terminalLine(line)}\n`);
}

/** Writes text exactly as given, for commander's help and usage, escaped by {@link terminalText} with no newline added. */
export function writeHumanRaw(stream: Writable, text: string): void {
  stream.write(terminalText(text));
}

/** Writes one JSON document on its own line: machine output, exact JSON, never escaped further. */
export function writeJsonLine(stream: Writable, value: unknown): void {
  stream.write(`${JSON.stringify(value)}\n`);
}
