/**
 * Signed addresses for the files of one `upload` call, asked for in batches sized to the work: as
 * many names as fit in one request URL, so that a call whose names all fit makes one request.
 */
import { nextTurn } from '../internal/waits.js';
import { ADDRESS_BATCH_BYTES } from './limits.js';
import type { UploadSource } from './put-body.js';
import type { UploadFileType } from './types.js';
import { AddressRequestRoom } from './upload-urls.js';

/** Asks the service for the addresses of these names, in one request when they fit in one URL. */
export type AddressFetcher = (names: string[]) => Promise<Record<string, string>>;

/**
 * One request per batch, shared by the workers that wait for it. A batch ends where its request
 * URL would pass the length limit, or where its files would pass {@link ADDRESS_BATCH_BYTES}:
 * addresses expire, so a batch of large files is kept short enough to be sent while they are
 * fresh. The next batch is asked for when the files of this one start running out (as many left
 * as there are workers), so that no worker waits for a round trip.
 */
export class AddressBook {
  readonly #sources: readonly UploadSource[];
  readonly #fetch: AddressFetcher;
  readonly #workers: number;
  /** The first file of each batch, in order, and the length of the file list as the last entry. */
  readonly #starts: number[];
  readonly #batches = new Map<number, Promise<Record<string, string>>>();

  constructor(
    sources: readonly UploadSource[],
    fetch: AddressFetcher,
    options: { workers: number; endpoint: URL; type: UploadFileType | undefined },
  ) {
    this.#sources = sources;
    this.#fetch = fetch;
    this.#workers = options.workers;
    this.#starts = batchStarts(sources, new AddressRequestRoom(options.endpoint, options.type));
  }

  /** The number of address requests the whole call makes, when every file gets its turn. */
  get batchCount(): number {
    return this.#starts.length - 1;
  }

  /** The signed address of file `index` (an empty string when the answer had none, which the PUT refuses). */
  async get(index: number): Promise<string> {
    const batch = this.#batchOf(index);
    const pending = this.#request(batch);
    const next = this.#starts[batch + 1] ?? this.#sources.length;
    if (next - index <= this.#workers) this.#request(batch + 1);
    const addresses = await pending;
    return addresses[(this.#sources[index] as UploadSource).name] ?? '';
  }

  /** The batch holding file `index`: the last whose start is at or before it. */
  #batchOf(index: number): number {
    let low = 0;
    let high = this.#starts.length - 2;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#starts[middle] as number) <= index) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  #request(batch: number): Promise<Record<string, string>> {
    let pending = this.#batches.get(batch);
    if (pending !== undefined || batch >= this.batchCount) return pending ?? Promise.resolve({});
    const first = this.#starts[batch] as number;
    const end = this.#starts[batch + 1] as number;
    const names: string[] = [];
    for (let index = first; index < end; index++) names.push((this.#sources[index] as UploadSource).name);
    // Its connection goes back to the pool before the PUTs that wait for these addresses are sent.
    pending = this.#fetch(names).then(async (addresses) => {
      await nextTurn();
      return addresses;
    });
    // Asked for ahead of need: if the run stops first, nobody awaits it, and its failure is moot.
    pending.catch(() => undefined);
    this.#batches.set(batch, pending);
    return pending;
  }
}

/** Where each batch starts, the file count appended: greedy, in file order, each batch at least one file. */
function batchStarts(sources: readonly UploadSource[], room: AddressRequestRoom): number[] {
  const starts: number[] = [];
  let bytes = 0;
  for (let index = 0; index < sources.length; index++) {
    const { name, size } = sources[index] as UploadSource;
    const full = starts.length > 0 && (!room.tryAdd(name).added || bytes + size > ADDRESS_BATCH_BYTES);
    if (starts.length === 0 || full) {
      starts.push(index);
      room.clear();
      room.tryAdd(name);
      bytes = 0;
    }
    bytes += size;
  }
  starts.push(sources.length);
  return starts;
}
