/**
 * The checkpoint's first write, made before anything is sent, refused by the file system: the
 * rename over a name another user took in a sticky directory (`/tmp`) after the path was checked
 * fails with EPERM. That is a usage error naming the option (exit 2), not an unexpected error.
 */
import * as fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeTempDir } from '../support/cli/run.js';

/** The next rename fails as the sticky bit makes it fail; the rest of node:fs is untouched. */
const refuseRename = { next: false };
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const renameSync: typeof real.renameSync = (from, to) => {
    if (refuseRename.next) {
      refuseRename.next = false;
      throw Object.assign(new Error(`EPERM: operation not permitted, rename '${from}' -> '${to}'`), {
        code: 'EPERM',
      });
    }
    real.renameSync(from, to);
  };
  return { ...real, default: { ...real, renameSync }, renameSync };
});

const { Checkpoint } = await import('../../src/cli/checkpoint.js');
const { UsageError } = await import('../../src/cli/exit-codes.js');

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => {
  temp.remove();
});

describe('the first checkpoint write', () => {
  it('is a usage error naming --checkpoint when the file system refuses the rename', () => {
    const path = temp.path('cp.json');
    refuseRename.next = true;
    const open = () =>
      Checkpoint.open(path, 'sha256:x', [{ path: 'a.csv', name: 'a.csv', format: 'csv', size: 1 }], false, {
        appId: 'app',
        baseUrl: 'http://127.0.0.1:4010',
      });
    expect(open).toThrow(UsageError);
    refuseRename.next = true;
    expect(open).toThrow(/^--checkpoint .*cp\.json: cannot write there \(EPERM\)/);
    expect(fs.readdirSync(temp.dir)).toEqual([]);
  });
});
