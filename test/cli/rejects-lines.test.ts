import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonSafe } from '../../src/cli/json-safe.js';
import { Output } from '../../src/cli/output.js';
import { RejectsWriter } from '../../src/cli/rejects.js';
import { RAW_TERMINAL_CONTROL } from '../support/cli/control-chars.js';
import { makeTempDir } from '../support/cli/run.js';

/** What a hostile service may put in an error message that lands in every rejects line of its batch. */
const HOSTILE = 'refused\u0085\u009b31m\u007f\u2028\u2029\u202e\u200b\u001b[2J\r\nend\u{e0041}';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

async function linesOf(write: (writer: RejectsWriter) => Promise<void>): Promise<string[]> {
  const path = temp.path('rejects.jsonl');
  const writer = new RejectsWriter(path);
  await write(writer);
  await writer.close();
  return readFileSync(path, 'utf8').split('\n').slice(0, -1);
}

describe('rejects lines', () => {
  it('escape what a terminal acts on, as --json does, and parse back to the same values', async () => {
    const record = { vendor: HOSTILE, [HOSTILE]: [HOSTILE, 1, null] };
    const [line] = await linesOf((writer) =>
      writer.write({ file: 'in.csv', line: 2, kind: 'failed', reasons: [{ field: '', message: HOSTILE }], record }),
    );
    expect(line).not.toMatch(RAW_TERMINAL_CONTROL);
    const parsed = JSON.parse(line as string);
    expect(parsed.reasons[0].message).toBe(HOSTILE);
    expect(parsed.record).toEqual(record);
  });

  it('hold a record with a cycle, a BigInt or a throwing getter instead of stopping the run', async () => {
    const cyclic: Record<string, unknown> = { vendor: 'A', amount: 1 };
    cyclic.self = cyclic;
    cyclic.list = [cyclic, { back: cyclic }];
    const big = { vendor: 'A', amount: 10n, nested: { n: 2n ** 70n } };
    const throwing = {
      vendor: 'A',
      get amount(): number {
        throw new Error('getter throws');
      },
    };
    const lines = await linesOf(async (writer) => {
      for (const record of [cyclic, big, throwing]) {
        await writer.write({
          file: 'in.csv',
          line: 3,
          kind: 'invalid',
          reasons: [{ field: 'x', message: 'm' }],
          record,
        });
      }
    });
    expect(lines.map((line) => JSON.parse(line).record)).toEqual([
      { vendor: 'A', amount: 1, self: '[Circular]', list: ['[Circular]', { back: '[Circular]' }] },
      { vendor: 'A', amount: '10', nested: { n: (2n ** 70n).toString() } },
      { vendor: 'A', amount: '[Unreadable]' },
    ]);
  });

  it('keep a shared object that is not a cycle, a __proto__ key as a key, and a Date as JSON writes it', () => {
    const shared = { a: 1 };
    const record = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    record.left = shared;
    record.right = shared;
    record.when = new Date(0);
    const copy = jsonSafe(record) as Record<string, unknown>;
    expect(JSON.parse(JSON.stringify(copy))).toEqual(JSON.parse(JSON.stringify(record)));
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
  });

  it('stop at a depth where JSON.stringify would still be safe', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => JSON.stringify(jsonSafe({ deep }))).not.toThrow();
    expect(JSON.stringify(jsonSafe({ deep }))).toContain('[Too deep]');
  });
});

describe('a single-value result (a token)', () => {
  it('is one line whatever it holds', () => {
    const stdout = new PassThrough();
    const chunks: Buffer[] = [];
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const output = new Output({ json: false, verbose: false, quiet: true, stdout, stderr: new PassThrough() });
    output.value(`tok-abc\ndefgh\r\u2028\u001b[2Jz`, { evenIfQuiet: true });
    const text = Buffer.concat(chunks).toString();
    expect(text.split('\n')).toEqual(['tok-abc\\ndefgh\\r\\u2028\\x1b[2Jz', '']);
  });
});
