/** Where one record handed to the publisher came from. */
export interface Origin {
  /** Position among the valid records of the input (the checkpoint's numbering). */
  ordinal: number;
  /** Index into the run's inputs. */
  input: number;
  line: number;
}

const BLOCK = 1024;

interface Block {
  ordinals: Float64Array;
  lines: Float64Array;
  inputs: Uint32Array;
  /** Entries added and not yet taken; the block is dropped at zero. */
  live: number;
}

/**
 * The origin of every record handed to the publisher, by the publisher's record index, kept only
 * until its batch settles. Indexes are handed out consecutively, so they are stored in blocks of
 * typed arrays: no object and no map entry per record. A map entry per record lived as long as its
 * batch, long enough to be promoted to the old generation, so that a million rows left a million
 * dead objects there for the full collector.
 */
export class OriginTable {
  readonly #blocks = new Map<number, Block>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(index: number, ordinal: number, input: number, line: number): void {
    const key = Math.floor(index / BLOCK);
    let block = this.#blocks.get(key);
    if (block === undefined) {
      block = {
        ordinals: new Float64Array(BLOCK).fill(-1),
        lines: new Float64Array(BLOCK),
        inputs: new Uint32Array(BLOCK),
        live: 0,
      };
      this.#blocks.set(key, block);
    }
    const slot = index % BLOCK;
    if (block.ordinals[slot] === -1) {
      block.live++;
      this.#size++;
    }
    block.ordinals[slot] = ordinal;
    block.lines[slot] = line;
    block.inputs[slot] = input;
  }

  /** The ordinal of `index`, left in place; undefined when it was never added or is taken already. */
  ordinalOf(index: number): number | undefined {
    const ordinal = this.#blocks.get(Math.floor(index / BLOCK))?.ordinals[index % BLOCK] ?? -1;
    return ordinal === -1 ? undefined : ordinal;
  }

  /** Removes and returns the origin of `index`; undefined when it was never added or is taken already. */
  take(index: number): Origin | undefined {
    const key = Math.floor(index / BLOCK);
    const block = this.#blocks.get(key);
    const slot = index % BLOCK;
    const ordinal = block?.ordinals[slot] ?? -1;
    if (block === undefined || ordinal === -1) return undefined;
    block.ordinals[slot] = -1;
    this.#size--;
    if (--block.live === 0) this.#blocks.delete(key);
    return { ordinal, input: block.inputs[slot] as number, line: block.lines[slot] as number };
  }

  /** Removes and returns every origin left, in index order. */
  takeAll(): Origin[] {
    const left: Origin[] = [];
    const keys = [...this.#blocks.keys()].sort((a, b) => a - b);
    for (const key of keys) {
      for (let slot = 0; slot < BLOCK; slot++) {
        const origin = this.take(key * BLOCK + slot);
        if (origin !== undefined) left.push(origin);
      }
    }
    return left;
  }
}
