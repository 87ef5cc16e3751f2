/**
 * The chaos workload of one seed: finance records with a unique `transactionNumber` each (so the
 * emulator's copy can be matched exactly) and files with deterministic pseudo-random bytes.
 */
import { createCipheriv, createHash } from 'node:crypto';
import type { FinanceRecordInput } from 'push-api-client';
import { seededRandom } from 'push-api-client/testing';

export interface WorkloadSize {
  records: number;
  files: number;
  /** Largest file; the first file is always empty and the second this size. */
  maxFileBytes: number;
  /** Records per finance request: smaller for small runs, so that mid-run events have batches around them. */
  batchSize: number;
}

/** Issue 5's workload: 100,000 records and 50 files from 0 B to 20 MB. */
export const FULL_WORKLOAD: WorkloadSize = {
  records: 100_000,
  files: 50,
  maxFileBytes: 20 * 1024 * 1024,
  batchSize: 1000,
};
/** For a few extra seeds in `npm test`: a tenth of the records, files up to 2 MB, 40 batches. */
export const SMALL_WORKLOAD: WorkloadSize = {
  records: 10_000,
  files: 12,
  maxFileBytes: 2 * 1024 * 1024,
  batchSize: 250,
};
/**
 * For `npm run chaos -- --seeds 200`: 5,000 records in 25 batches and 8 files up to 1 MB. A seed's
 * time is mostly retry backoff and Retry-After waits, not bytes, so this keeps every fault kind
 * and every mid-run event while a seed takes a few seconds.
 */
export const MANY_SEEDS_WORKLOAD: WorkloadSize = {
  records: 5_000,
  files: 8,
  maxFileBytes: 1024 * 1024,
  batchSize: 200,
};

export interface ChaosFile {
  name: string;
  data: Uint8Array;
  sha256: string;
}

export interface Workload {
  records: FinanceRecordInput[];
  /** Input indexes of the records built invalid on purpose (they must land in `invalid`). */
  invalidIndexes: Set<number>;
  files: ChaosFile[];
}

export function transactionNumber(seed: number, index: number): string {
  return `s${seed}-r${index}`;
}

/** Deterministic bytes: AES-CTR over zeros, keyed by seed and file, fast even for 20 MB. */
function fileBytes(seed: number, fileIndex: number, size: number): Uint8Array {
  const key = createHash('sha256').update(`chaos-file:${seed}:${fileIndex}`).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  return new Uint8Array(cipher.update(Buffer.alloc(size)));
}

/** Sizes from 0 B to the maximum, log-uniform in between so most files are small and a few are big. */
function fileSizes(count: number, max: number, random: () => number): number[] {
  return Array.from({ length: count }, (_, i) => {
    if (i === 0) return 0;
    if (i === 1) return max;
    return Math.floor(Math.exp(random() * Math.log(max / 8)));
  });
}

const NAME_STEMS = ['users', 'contracts', 'ledger', 'données', 'レポート', 'space name', 'a+b=c', 'ünïcödé'];

export function buildWorkload(seed: number, size: WorkloadSize): Workload {
  const random = seededRandom(seed ^ 0x5eed);
  const records: FinanceRecordInput[] = [];
  const invalidIndexes = new Set<number>();
  for (let i = 0; i < size.records; i++) {
    const invalid = random() < 0.001;
    if (invalid) invalidIndexes.add(i);
    records.push({
      created: 1_700_000_000_000 + i,
      amount: invalid ? Number.NaN : Math.round(random() * 1_000_000) / 100,
      currency: i % 3 === 0 ? 'USD' : 'EUR',
      identifier: `user${i % 997}@example.com`,
      type: i % 2 === 0 ? 'expense' : 'invoice',
      vendor: `Vendor ${i % 101}`,
      description: i % 7 === 0 ? `line ${i}: "quoted", ünïcödé ✓` : undefined,
      transactionNumber: transactionNumber(seed, i),
    });
  }
  for (const record of records) if (record.description === undefined) delete record.description;
  const files = fileSizes(size.files, size.maxFileBytes, random).map((bytes, i) => {
    const data = fileBytes(seed, i, bytes);
    const stem = NAME_STEMS[i % NAME_STEMS.length] ?? 'file';
    return { name: `${stem}-${i}.csv`, data, sha256: createHash('sha256').update(data).digest('hex') };
  });
  return { records, invalidIndexes, files };
}
