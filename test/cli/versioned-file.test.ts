import { readdirSync, readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VersionedFile } from '../../src/cli/versioned-file.js';
import { makeTempDir } from '../support/cli/run.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

function counterFile(): { file: VersionedFile; bump: () => number; path: string } {
  let state = 0;
  const path = temp.path('state.txt');
  return { file: new VersionedFile(path, '--checkpoint', () => String(state)), bump: () => ++state, path };
}

describe('VersionedFile', () => {
  it('never lands an older background version over a newer one written at once', async () => {
    const { file, bump, path } = counterFile();
    for (let i = 0; i < 50; i++) {
      bump();
      file.saveSoon();
      if (i % 7 === 0) file.saveNow();
    }
    bump();
    file.saveNow();
    // Let every background write still under way finish: none may replace version 51.
    const deadline = Date.now() + 5000;
    while (readdirSync(temp.dir).length > 1 && Date.now() < deadline) await sleep(5);
    await sleep(20);
    expect(readFileSync(path, 'utf8')).toBe('51');
    expect(file.pending).toBe(false);
    expect(readdirSync(temp.dir)).toEqual(['state.txt']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('resolves saveAndWait only once a version holding the state at the call is on the disk', async () => {
    const { file, bump, path } = counterFile();
    const seen: string[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      const value = String(bump());
      waits.push(
        file.saveAndWait().then(() => {
          const onDisk = Number(readFileSync(path, 'utf8'));
          seen.push(onDisk >= Number(value) ? 'ok' : `${onDisk} < ${value}`);
        }),
      );
    }
    await Promise.all(waits);
    expect(seen).toEqual(Array(20).fill('ok'));
  });

  it('rejects the waiters and throws on the next save once a background write fails', async () => {
    const file = new VersionedFile(temp.path('missing-dir/state.txt'), '--checkpoint', () => 'x');
    await expect(file.saveAndWait()).rejects.toThrow(/--checkpoint .*state\.txt: cannot write there/);
    expect(() => file.saveSoon()).toThrow(/cannot write there/);
  });
});
