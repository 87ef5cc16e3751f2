import { writeFileAtomically, writeFileAtomicallyInBackground } from './files.js';

/**
 * A file rewritten whole, again and again, in versions: some written before the caller goes on
 * ({@link saveNow}), others in the background ({@link saveSoon}), without an older version ever
 * landing over a newer one.
 */
export class VersionedFile {
  /** The last version asked for, and the newest one renamed into place. */
  #version = 0;
  #committed = 0;
  #background: Promise<void> | undefined;
  /** A background save was asked for while one was under way. */
  #again = false;
  #failure: Error | undefined;
  /** Callers of {@link saveAndWait}, each waiting for the first version taken after its call. */
  #waiters: { version: number; resolve: () => void; reject: (error: Error) => void }[] = [];

  /** `render` gives the file's current text; it is called when a version is taken. */
  constructor(
    readonly path: string,
    readonly option: string,
    readonly render: () => string,
  ) {}

  /** A version asked for has not reached the disk yet. */
  get pending(): boolean {
    return this.#again || this.#version > this.#committed;
  }

  /**
   * Writes the current text atomically and durably before returning: a crash, even of the
   * machine, leaves this version or an earlier one, never half a file.
   */
  saveNow(): void {
    if (this.#failure) throw this.#failure;
    const version = ++this.#version;
    const text = this.render();
    // Everything up to now is in this version: a background save still waiting is not needed.
    this.#again = false;
    writeFileAtomically(this.path, text, this.option);
    this.#commit(version);
  }

  /**
   * {@link saveSoon}, resolved once a version holding everything up to this call is on the disk:
   * the caller waits for the disk without blocking the rest of the process.
   */
  saveAndWait(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    // The next version taken, whether by this call, a write already queued, or a saveNow.
    const version = this.#version + 1;
    const landed = new Promise<void>((resolve, reject) => this.#waiters.push({ version, resolve, reject }));
    this.saveSoon();
    return landed;
  }

  #commit(version: number): void {
    this.#committed = Math.max(this.#committed, version);
    const waiting = this.#waiters;
    this.#waiters = waiting.filter((waiter) => waiter.version > this.#committed);
    for (const waiter of waiting) if (waiter.version <= this.#committed) waiter.resolve();
  }

  #fail(error: Error): void {
    this.#failure = error;
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) waiter.reject(error);
  }

  /**
   * Saves without holding up the caller: the write and its flushes happen off the main thread, one
   * at a time, and calls made meanwhile are folded into one more write. A background write
   * overtaken by a newer version is dropped, never renamed over it. A failed background write is
   * thrown by the next save.
   */
  saveSoon(): void {
    if (this.#failure) throw this.#failure;
    if (this.#background !== undefined) {
      this.#again = true;
      return;
    }
    const version = ++this.#version;
    const text = this.render();
    this.#background = writeFileAtomicallyInBackground(this.path, text, this.option, () => this.#committed > version)
      .then((renamed) => {
        if (renamed) this.#commit(version);
      })
      .catch((error: unknown) => {
        this.#fail(error instanceof Error ? error : new Error(String(error)));
      })
      .finally(() => {
        this.#background = undefined;
        if (this.#again && this.#failure === undefined) {
          this.#again = false;
          this.saveSoon();
        }
      });
  }
}
