import { createHash } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { VERSION } from '../index.js';
import { UsageError } from './exit-codes.js';
import { readBoundedFile } from './files.js';
import { type Range, RangeSet } from './ranges.js';
import { changeBetween, InputChangedError, identityOf, openUnchanged } from './readers/file-identity.js';
import type { InputSpec } from './readers/index.js';
import { UnwritableOutputError } from './unwritable-output.js';
import { VersionedFile } from './versioned-file.js';

/**
 * The `--checkpoint` file. Records are numbered by ordinal: the position of each *valid* record in
 * the input, which is the same on every run over the same input. The file lists which ordinals were
 * delivered, failed or have an unknown outcome, and which were in batches on their way to the service.
 */
interface CheckpointFile {
  version: 1;
  /** sha256 of the CLI version, the reading options and every input byte. */
  fingerprint: string;
  /** Where the records were delivered: a checkpoint for one app says nothing about another. */
  target: CheckpointTarget;
  inputs: { name: string; size: number | undefined }[];
  /**
   * Ordinals of the batches in flight: each batch's ordinals are written here right before its
   * request is sent, and leave when it settles. After a crash, these are the records that may have
   * reached the service: at most `--concurrency` batches.
   */
  inFlight: Range[];
  /** Older files: every ordinal below this may have been sent. Read, never written. */
  handedOffThrough?: number;
  delivered: Range[];
  failed: Range[];
  unknown: Range[];
  complete: boolean;
  updatedAt: string;
}

/**
 * The largest checkpoint file a run reads, in bytes. A checkpoint holds ranges of ordinals, about
 * 16 bytes per range; 64 MiB is some four million ranges, far beyond what a run that alternates
 * delivered and failed batches writes. A larger file is refused, not read.
 */
export const MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024;

/** The app and data API a checkpoint delivers to. No credential: the file is not a secret. */
export interface CheckpointTarget {
  appId: string;
  baseUrl: string;
}

/** The base URL as the service sees it, so that `http://h:1` and `http://h:1/` are one target. */
function normalizeBaseUrl(baseUrl: string): string {
  try {
    return new URL(baseUrl).href;
  } catch {
    return baseUrl;
  }
}

function describeTarget(target: CheckpointTarget): string {
  return `app "${target.appId}" at ${target.baseUrl}`;
}

/** What a resumed run does with one record. */
export type ResumeDecision = 'send' | 'skip-delivered' | 'skip-unknown';

/**
 * The input fingerprint: a different file, changed content, another format or `--map`, or another
 * CLI version (whose validation could number records differently) all refuse the checkpoint.
 * Rejects with an `AbortError` when `signal` fires.
 */
export async function fingerprintInputs(
  inputs: InputSpec[],
  readingOptions: unknown,
  signal?: AbortSignal,
): Promise<string> {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ cli: VERSION, readingOptions, formats: inputs.map((input) => input.format) }));
  for (const input of inputs) {
    if (input.path === '-') throw new UsageError('--checkpoint needs files: stdin (-) cannot be read again to resume');
    hash.update('\0file\0');
    const file = await openUnchanged(input.path, input.name, input.identity).catch((error: unknown) => {
      throw error instanceof InputChangedError ? changedMessage(input.name, error.change) : error;
    });
    try {
      // Abortable: hashing a large input takes seconds, and a signal must not wait for it.
      for await (const chunk of file.createReadStream({ signal, autoClose: false })) hash.update(chunk as Buffer);
      // The fingerprint must be of the file the run reads: the one checked, unchanged.
      const change = input.identity && changeBetween(input.identity, identityOf(fstatSync(file.fd)));
      if (change !== undefined) throw changedMessage(input.name, change);
    } finally {
      await file.close();
    }
  }
  return `sha256:${hash.digest('hex')}`;
}

function changedMessage(name: string, change: string): UsageError {
  return new UsageError(
    `${name} changed while it was read (${change}); nothing was sent: publish it once whatever writes it has finished`,
  );
}

function isRangeList(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.every(
      (range) =>
        Array.isArray(range) &&
        range.length === 2 &&
        Number.isSafeInteger(range[0]) &&
        Number.isSafeInteger(range[1]) &&
        range[0] >= 0 &&
        range[0] <= range[1],
    )
  );
}

/**
 * Most ranges in one list of a checkpoint. A run adds a range only where a batch's outcome differs
 * from its neighbours', so real files hold a handful; a file listing a million made every save of a
 * small run write them all again, and the run took many times as long and as much memory.
 */
export const MAX_CHECKPOINT_RANGES = 100_000;

/** What is wrong with the body of a checkpoint whose fingerprint matched, if anything. */
function malformed(file: CheckpointFile): string | undefined {
  for (const key of ['delivered', 'failed', 'unknown', 'inFlight'] as const) {
    if (file[key] !== undefined && !isRangeList(file[key])) return `"${key}" is not a list of [start, end] ranges`;
    const count = file[key]?.length ?? 0;
    if (count > MAX_CHECKPOINT_RANGES) {
      return `"${key}" holds ${count} ranges, more than the ${MAX_CHECKPOINT_RANGES} a checkpoint may hold`;
    }
  }
  if (!isRangeList(file.delivered)) return '"delivered" is missing';
  const mark = file.handedOffThrough;
  if (mark !== undefined && !(Number.isSafeInteger(mark) && mark >= 0)) return '"handedOffThrough" is not a count';
  const target = file.target as unknown;
  if (target !== undefined && (typeof target !== 'object' || target === null)) return '"target" is not an object';
  return undefined;
}

/**
 * Records an earlier run reserved for a request and never settled. Older files marked a prefix
 * (`handedOffThrough`) instead of the batches in flight; both are honoured.
 */
function unsettledInFlight(previous: CheckpointFile | undefined): RangeSet {
  if (previous === undefined) return new RangeSet();
  const settled = new RangeSet(previous.delivered ?? [])
    .union(new RangeSet(previous.failed ?? []))
    .union(new RangeSet(previous.unknown ?? []));
  const reserved = new RangeSet(previous.inFlight ?? []).union(
    new RangeSet().complementUpTo(previous.handedOffThrough ?? 0),
  );
  return reserved.difference(settled);
}

export class Checkpoint {
  #delivered: RangeSet;
  #failed = new RangeSet();
  #unknown: RangeSet;
  /** Unknown in an earlier run, and not to be resent: such records are skipped and listed as unknown. */
  readonly #carriedUnknown: RangeSet;
  readonly #previouslyDelivered: RangeSet;
  /** Records of batches whose request may be on its way and that have not settled. */
  #inFlight = new RangeSet();
  #complete = false;
  readonly #file: VersionedFile;
  /** Something changed since the last version was taken. */
  #changed = true;

  readonly #fingerprint: string;
  readonly #target: CheckpointTarget;
  readonly #inputs: CheckpointFile['inputs'];

  private constructor(
    path: string,
    fingerprint: string,
    target: CheckpointTarget,
    inputs: CheckpointFile['inputs'],
    previous: CheckpointFile | undefined,
    resendUnknown: boolean,
  ) {
    this.#fingerprint = fingerprint;
    this.#target = target;
    this.#inputs = inputs;
    this.#file = new VersionedFile(path, '--checkpoint', () => this.#serialize());
    this.#previouslyDelivered = new RangeSet(previous?.delivered ?? []);
    this.#delivered = new RangeSet(previous?.delivered ?? []);
    // Records of batches in flight when a run died may have reached the service: they count as
    // unknown, exactly like an ambiguous batch.
    const interrupted = unsettledInFlight(previous);
    const unknownBefore = new RangeSet(previous?.unknown ?? []).union(interrupted);
    this.#carriedUnknown = resendUnknown ? new RangeSet() : unknownBefore;
    this.#unknown = resendUnknown ? new RangeSet() : unknownBefore;
    // Failed batches were refused by the service, so they are simply sent again.
  }

  /** Opens or creates the checkpoint; a file written for other input, another app or another service is refused (exit 2). */
  static open(
    path: string,
    fingerprint: string,
    inputs: InputSpec[],
    resendUnknown: boolean,
    target: CheckpointTarget,
  ): Checkpoint {
    const here = { appId: target.appId, baseUrl: normalizeBaseUrl(target.baseUrl) };
    let previous: CheckpointFile | undefined;
    // Checked again here, on the file actually read: the lock was taken by name.
    const text = readBoundedFile(path, MAX_CHECKPOINT_BYTES, '--checkpoint', { singleLink: true, ownOnly: true });
    if (text !== undefined) {
      try {
        previous = JSON.parse(text) as CheckpointFile;
      } catch {
        throw new UsageError(`--checkpoint ${path}: not a checkpoint file (invalid JSON)`);
      }
      if (typeof previous !== 'object' || previous === null || previous.version !== 1) {
        throw new UsageError(`--checkpoint ${path}: not a checkpoint file this version can read`);
      }
      if (previous.fingerprint !== fingerprint) {
        throw new UsageError(
          `--checkpoint ${path} was written for different input or options; use a new checkpoint file or delete this one`,
        );
      }
      const problem = malformed(previous);
      if (problem !== undefined) {
        throw new UsageError(
          `--checkpoint ${path}: the file is damaged (${problem}); delete it to start over, or restore it`,
        );
      }
      const there = previous.target;
      // A checkpoint whose records all failed (a 404 for a mistyped app) delivered nothing
      // anywhere: it may be reused for the right target.
      const mayHaveDelivered =
        previous.delivered.length > 0 || (previous.unknown?.length ?? 0) > 0 || unsettledInFlight(previous).size() > 0;
      if (mayHaveDelivered && (there?.appId !== here.appId || there.baseUrl !== here.baseUrl)) {
        const written = there === undefined ? 'an unrecorded app' : describeTarget(there);
        throw new UsageError(
          `--checkpoint ${path} was written for ${written}, not ${describeTarget(here)}; use a new checkpoint file`,
        );
      }
    }
    const described = inputs.map((input) => ({ name: input.name, size: input.size }));
    const checkpoint = new Checkpoint(path, fingerprint, here, described, previous, resendUnknown);
    // Written at once: an unwritable path is a usage error before anything is sent. The rename
    // can still be refused (EPERM) where another user took the name in `/tmp` since it was checked.
    try {
      checkpoint.#file.saveNow();
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new UsageError(`--checkpoint ${path}: cannot write there (${code})`);
    }
    flushOnExit(checkpoint);
    return checkpoint;
  }

  /** Whether this run sends the record with this ordinal. */
  decide(ordinal: number): ResumeDecision {
    if (this.#previouslyDelivered.has(ordinal)) return 'skip-delivered';
    if (this.#carriedUnknown.has(ordinal)) return 'skip-unknown';
    return 'send';
  }

  /** Counts carried from earlier runs, for the summary. */
  carried(): { delivered: number; unknown: number } {
    return { delivered: this.#previouslyDelivered.size(), unknown: this.#carriedUnknown.size() };
  }

  /**
   * Called right before a batch's request is sent, with its ordinals; resolves once that is on the
   * disk, so that a run killed from here on finds them on resume and reports them unknown instead of
   * sending them twice. Other batches go on meanwhile, and reservations made while a write is under
   * way share the next one.
   */
  reserve(ordinals: readonly number[]): Promise<void> {
    this.#inFlight.addAll(ordinals);
    this.#changed = true;
    return this.#file.saveAndWait().catch((error: unknown) => {
      throw this.#unwritable(error);
    });
  }

  /** A batch settled (`failed` also for records reserved and then never sent: send them again). */
  settle(status: 'sent' | 'failed' | 'unknown', ordinals: readonly number[]): void {
    const target = status === 'sent' ? this.#delivered : status === 'failed' ? this.#failed : this.#unknown;
    target.addAll(ordinals);
    this.#inFlight.removeAll(ordinals);
    this.#changed = true;
  }

  markComplete(): void {
    this.#complete = true;
    this.#changed = true;
  }

  /**
   * Writes the checkpoint atomically and durably before returning: a crash, even of the machine,
   * leaves this version or the previous one, never half a file. Records may be handed to the
   * sender only once the version that reserves them is saved this way.
   */
  save(): void {
    try {
      this.#file.saveNow();
    } catch (error) {
      throw this.#unwritable(error);
    }
  }

  /**
   * Saves without holding up the run (see {@link VersionedFile.saveSoon}). For settled batches,
   * whose records are already reserved: if the process dies before this lands, they count as
   * unknown, like a batch in flight.
   */
  saveSoon(): void {
    try {
      this.#file.saveSoon();
    } catch (error) {
      throw this.#unwritable(error);
    }
  }

  /** Saves at once if anything is newer than what is on the disk. */
  flush(): void {
    if (this.#changed || this.#file.pending) this.save();
  }

  /**
   * A write refused once the run has begun. Every record was reserved on the disk before it was
   * sent, so an older version on the disk can only make a re-run report more records unknown,
   * never send one twice.
   */
  #unwritable(error: unknown): UnwritableOutputError {
    if (error instanceof UnwritableOutputError) return error;
    return new UnwritableOutputError(
      '--checkpoint',
      this.#file.path,
      error,
      'the run stopped. The checkpoint on the disk is an earlier version: a re-run reports the records it has no outcome for as unknown instead of sending them twice. Free the disk or fix the directory, then run the same command again',
    );
  }

  #serialize(): string {
    this.#changed = false;
    return serialize({
      version: 1,
      fingerprint: this.#fingerprint,
      target: this.#target,
      inputs: this.#inputs,
      inFlight: this.#inFlight.ranges(),
      delivered: this.#delivered.ranges(),
      failed: this.#failed.ranges(),
      unknown: this.#unknown.ranges(),
      complete: this.#complete,
      updatedAt: new Date().toISOString(),
    });
  }
}

const flushedOnExit = new Set<Checkpoint>();

/**
 * Whatever ends the process (an error, a signal handler's exit), the newest state reaches the disk,
 * before the checkpoint's lock is released: prepended, this listener runs before the lock's.
 */
function flushOnExit(checkpoint: Checkpoint): void {
  if (flushedOnExit.size === 0) {
    process.prependListener('exit', () => {
      for (const open of flushedOnExit) {
        try {
          open.flush();
        } catch {
          // the disk refused: the previous version stands, which only makes more records unknown
        }
      }
    });
  }
  flushedOnExit.add(checkpoint);
}

/** One key per line, each range list on its line: readable, and a few bytes per range. */
function serialize(file: CheckpointFile): string {
  const lines = Object.entries(file).map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}
