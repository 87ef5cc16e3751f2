import type { Writable } from 'node:stream';
import { terminalLine, writeHuman, writeHumanLine, writeJsonLine, writeStack } from './terminal-text.js';

export interface OutputOptions {
  /** `--json`: stdout carries exactly one JSON document; all human text goes to stderr. */
  json: boolean;
  verbose: boolean;
  /** `--quiet`: only errors (and the `--json` report); no progress, notices or summary. @default false */
  quiet?: boolean;
  stdout?: Writable & { isTTY?: boolean };
  stderr?: Writable & { isTTY?: boolean };
}

/** Whether a command has printed its `--json` report; if not, a failure prints an error report instead. */
let jsonReportWritten = false;

export function wasJsonReportWritten(): boolean {
  return jsonReportWritten;
}

/**
 * Takes the one `--json` report of the process: true once, for whoever prints it; false if a
 * report is printed already (an interrupted run's object must not be followed by another one).
 */
export function claimJsonReport(): boolean {
  if (jsonReportWritten) return false;
  jsonReportWritten = true;
  return true;
}

/**
 * Where each kind of text goes. Results (summary, token details) go to stdout, or to stderr under
 * `--json`; progress and log lines always go to stderr so that stdout stays clean for pipes.
 * Every human line passes through terminal-text.ts, which shows control characters escaped:
 * log lines and errors are one line each (a newline inside is escaped too), results and summaries
 * are blocks whose line breaks the CLI wrote.
 */
export class Output {
  readonly json: boolean;
  readonly verbose: boolean;
  readonly quiet: boolean;
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };

  constructor(options: OutputOptions) {
    this.json = options.json;
    this.verbose = options.verbose;
    this.quiet = options.quiet === true;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
  }

  /**
   * Progress bars only where a person is watching: stderr is a terminal, and one that can move
   * its cursor. `TERM=dumb` (Emacs' shell, an IDE's run pane, some CI runners' pseudo-terminals)
   * says it cannot: the bars' escape codes would show as text, so it gets the plain lines.
   */
  get interactive(): boolean {
    return !this.quiet && this.stderr.isTTY === true && process.env.TERM !== 'dumb';
  }

  /**
   * A human-readable result line. `evenIfQuiet`: printed under `--quiet` too, for what the user
   * asked for by a flag (`--print-token`).
   */
  result(line: string, { evenIfQuiet = false } = {}): void {
    if (this.quiet && !evenIfQuiet) return;
    writeHuman(this.json ? this.stderr : this.stdout, line);
  }

  /**
   * A result that is one value (a token): one line whatever it holds, its newlines escaped too, so
   * a value from outside cannot split itself into lines that read as something else.
   */
  value(text: string, { evenIfQuiet = false } = {}): void {
    if (this.quiet && !evenIfQuiet) return;
    writeHumanLine(this.json ? this.stderr : this.stdout, text);
  }

  /**
   * A run's summary: a result, but under `--quiet` printed only when the run did not succeed, and
   * then on stderr with the errors. Quiet means no news on success, never silence on a failure.
   */
  summary(text: string, succeeded: boolean): void {
    if (!this.quiet) this.result(text);
    else if (!succeeded) writeHuman(this.stderr, text);
  }

  /** A log line (progress without a terminal, notices); `evenIfQuiet`: an error worth seeing under `--quiet`. */
  log(line: string, { evenIfQuiet = false } = {}): void {
    if (this.quiet && !evenIfQuiet) return;
    writeHumanLine(this.stderr, line);
  }

  /** The one JSON report of `--json`. */
  report(value: unknown): void {
    if (!this.json || !claimJsonReport()) return;
    writeJsonLine(this.stdout, value);
  }

  error(message: string, error?: unknown): void {
    writeHumanLine(this.stderr, `push-api: ${message}`);
    if (this.verbose && error instanceof Error && error.stack) writeStack(this.stderr, error);
  }
}

/**
 * A small aligned two-column table, plain text so it reads the same in a terminal and in a log.
 * Each cell is one line (a file name holding a newline shows it escaped), so the table's line
 * breaks are the only ones kept when it is printed.
 */
export function formatTable(rows: [string, string | number][]): string {
  const cells = rows.map(([label, value]) => [terminalLine(label), terminalLine(String(value))] as const);
  const width = Math.max(...cells.map(([label]) => label.length));
  return cells.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n');
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
