/** The address batches of one upload call: sized by the request URL and by the bytes of their files. */
import { describe, expect, it } from 'vitest';
import { ADDRESS_BATCH_BYTES, MAX_UPLOAD_URLS_URL_LENGTH } from '../../src/uploads/limits.js';
import type { UploadSource } from '../../src/uploads/put-body.js';
import { AddressBook, uploadUrlsEndpoint, uploadUrlsRequests } from '../../src/uploads/uploader.js';

const endpoint = uploadUrlsEndpoint(new URL('https://api.example.com'), 'app-1');
const MiB = 1024 * 1024;

function sources(sizes: readonly number[], name = (i: number) => `file-${i}.csv`): UploadSource[] {
  return sizes.map((size, i) => ({
    name: name(i),
    size,
    reopenable: true,
    open: () => {
      throw new Error('not read in this test');
    },
  }));
}

/** An address book whose fetcher answers at once and records the names of each request. */
function book(files: UploadSource[], workers = 4) {
  const requests: string[][] = [];
  const addresses = new AddressBook(
    files,
    async (names) => {
      requests.push(names);
      return Object.fromEntries(names.map((name) => [name, `https://storage.example.com/${name}`]));
    },
    { workers, endpoint, type: 'users' },
  );
  return { addresses, requests };
}

describe('AddressBook', () => {
  it('asks for every address in one request when all names fit in one URL', async () => {
    const files = sources(Array.from({ length: 300 }, () => 10));
    const { addresses, requests } = book(files);
    expect(addresses.batchCount).toBe(1);
    expect(await addresses.get(0)).toBe('https://storage.example.com/file-0.csv');
    expect(await addresses.get(299)).toBe('https://storage.example.com/file-299.csv');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toHaveLength(300);
  });

  it('fills each request up to the URL limit, as the request builder splits them', async () => {
    const files = sources(
      Array.from({ length: 1000 }, () => 10),
      (i) => `export-${i}-ü ${'x'.repeat(i % 40)}.csv`,
    );
    const { addresses, requests } = book(files, 1000);
    for (let i = 0; i < files.length; i++) await addresses.get(i);
    // The same groups as the request URLs getUploadUrls builds: one request per batch, none split again.
    const urls = uploadUrlsRequests(
      endpoint,
      files.map((file) => file.name),
      'users',
    );
    expect(requests.map((names) => names.length)).toEqual(
      urls.map((url) => url.searchParams.getAll('filenames').length),
    );
    expect(requests.length).toBeGreaterThan(2);
    for (const url of urls) expect(url.href.length).toBeLessThan(MAX_UPLOAD_URLS_URL_LENGTH);
  });

  it('starts a new batch where the files would pass the byte budget, and gives a larger file a batch of its own', async () => {
    const big = ADDRESS_BATCH_BYTES + 1;
    const files = sources([300 * MiB, 200 * MiB, 100 * MiB, big, 1, 1]);
    const { addresses, requests } = book(files, 1);
    for (let i = 0; i < files.length; i++) await addresses.get(i);
    expect(requests).toEqual([
      ['file-0.csv', 'file-1.csv'],
      ['file-2.csv'],
      ['file-3.csv'],
      ['file-4.csv', 'file-5.csv'],
    ]);
  });

  it('asks for the next batch when as many files of this one are left as there are workers, not before', async () => {
    const files = sources(Array.from({ length: 10 }, () => 100 * MiB));
    const { addresses, requests } = book(files, 2);
    // Batches of five files (500 MiB): [0..4], [5..9].
    await addresses.get(0);
    await addresses.get(2);
    expect(requests).toHaveLength(1);
    await addresses.get(3);
    expect(requests).toHaveLength(2);
    await addresses.get(5);
    expect(requests).toHaveLength(2);
  });
});
