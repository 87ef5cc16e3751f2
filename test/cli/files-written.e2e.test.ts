/** Files the CLI writes (checkpoint, rejects) and inputs it refuses: exclusive temp files, clear input errors. */
import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Checkpoint } from '../../src/cli/checkpoint.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import type { InputSpec } from '../../src/cli/readers/index.js';
import { MAX_REJECT_MESSAGE_CHARS, RejectsWriter } from '../../src/cli/rejects.js';
import { buildCli } from '../support/cli/build.js';
import { CSV_HEADER, csvRows, killChildren, makeTempDir, runCli } from '../support/cli/run.js';

const inputs: InputSpec[] = [{ path: 'a.csv', name: 'a.csv', format: 'csv', size: 10 }];
const target = { appId: 'app-a', baseUrl: 'http://127.0.0.1:4010' };
let temp: ReturnType<typeof makeTempDir>;
let cli: string;
beforeAll(async () => {
  cli = await buildCli();
}, 60_000);
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());
afterAll(killChildren);

describe('files the CLI writes', () => {
  it('never writes through a link planted at the old predictable temp name of the checkpoint', () => {
    const path = temp.path('cp.json');
    const victim = temp.path('victim.txt');
    writeFileSync(victim, 'precious');
    symlinkSync(victim, `${path}.${process.pid}.tmp`);
    const checkpoint = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    checkpoint.settle('sent', [0, 1]);
    checkpoint.save();
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(path, 'utf8')).delivered).toEqual([[0, 2]]);
    // Only the checkpoint, the victim and the planted link: no temp file is left behind.
    expect(readdirSync(temp.dir).sort()).toEqual(['cp.json', `cp.json.${process.pid}.tmp`, 'victim.txt'].sort());
  });

  it('refuses a checkpoint with a valid fingerprint and a malformed body, naming the file and the problem', () => {
    const path = temp.path('cp.json');
    Checkpoint.open(path, 'sha256:x', inputs, false, target).save();
    const file = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...file, delivered: [[0, 'ten']] }));
    expect(() => Checkpoint.open(path, 'sha256:x', inputs, false, target)).toThrow(UsageError);
    expect(() => Checkpoint.open(path, 'sha256:x', inputs, false, target)).toThrow(
      /--checkpoint .*cp\.json: the file is damaged \("delivered" is not a list of \[start, end\] ranges\)/,
    );
  });

  it('writes rejects under a temporary name and renames it into place; messages are truncated', async () => {
    const path = temp.path('rejects.jsonl');
    const rejects = new RejectsWriter(path);
    // Until the rename, the name is held by an empty file of this user's, never the run's rows.
    expect(readFileSync(path, 'utf8')).toBe('');
    await rejects.write({
      file: 'a.csv',
      line: 2,
      kind: 'failed',
      reasons: [{ field: '', message: 'x'.repeat(1_000_000) }],
    });
    await rejects.close();
    const line = readFileSync(path, 'utf8');
    expect(line.length).toBeLessThan(MAX_REJECT_MESSAGE_CHARS + 200);
    expect(JSON.parse(line).reasons[0].message).toMatch(/more characters\)$/);
    expect(readdirSync(temp.dir)).toEqual(['rejects.jsonl']);
  });
});

describe('inputs the CLI refuses or rejects (dry run, real child process)', () => {
  const dryRun = (...args: string[]) => runCli(cli, ['finance', 'publish', '--app', 'demo-app', '--dry-run', ...args]);

  it('ends a .json input whose top-level key is over 1 MiB with exit 2 and a message naming the file', async () => {
    const path = temp.path('big-key.json');
    writeFileSync(path, `{"${'k'.repeat(1_100_000)}": 1, "records": []}`);
    const result = await dryRun(path);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${path}:1: a key of the top-level object is longer than`);
    expect(result.stderr).not.toMatch(/unexpected error/);
  });

  it('ignores a CSV column named __proto__ like any other unknown column, and refuses it under --strict-columns', async () => {
    const path = temp.path('proto.csv');
    writeFileSync(path, `${CSV_HEADER},__proto__\n${csvRows(1)},polluted\n`);
    const result = await dryRun('--json', path);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      recordsValid: 1,
      recordsInvalid: 0,
      ignoredColumns: ['__proto__'],
    });
    const strict = await dryRun('--strict-columns', path);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('"__proto__"');
  });
});
