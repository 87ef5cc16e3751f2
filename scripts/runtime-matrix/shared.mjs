// What every runtime's smoke flow sends, generated the same way by the flow and by the driver that
// checks the emulator's state afterwards.

/** Deterministic bytes that do not repeat in any short period. */
export function patternBytes(size, seed) {
  const bytes = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

export const RECORD_COUNT = 2500;
export const MEMORY_FILE = { name: 'memory.bin', size: 300_000, seed: 7 };
export const DISK_FILE = { name: 'disk.bin', size: 3 * 1024 * 1024 + 17, seed: 11 };

export function makeRecords(count) {
  return Array.from({ length: count }, (_, i) => ({
    created: Date.UTC(2025, 0, 1) + i * 60_000,
    amount: 10 + i,
    currency: 'EUR',
    identifier: `user${i}@example.com`,
    type: i % 2 === 0 ? 'expense' : 'invoice',
    vendor: 'Grüße GmbH',
  }));
}
