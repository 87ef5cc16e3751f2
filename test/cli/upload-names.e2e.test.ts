/**
 * `push-api upload` on directories whose file names the service cannot take: refused before
 * anything is sent, exit 2 (an input error), naming the path.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { emulatorEnv, killChildren, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
afterAll(killChildren);

const upload = (dir: string) =>
  runCli(ctx.cli, ['upload', '--app', DEMO_APP_ID, '--type', 'other', `${dir}/*.csv`], {
    env: emulatorEnv(ctx.emulator),
    cwd: ctx.temp.dir,
  });

describe('upload: file names the service cannot take', () => {
  it('refuses a name with a newline with exit 2, naming the path, and uploads nothing', async () => {
    mkdirSync(ctx.temp.path('newline'));
    writeFileSync(ctx.temp.path('newline/a\nb.csv'), 'x');
    writeFileSync(ctx.temp.path('newline/ok.csv'), 'y');
    const result = await upload('newline');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('newline/a\\nb.csv: this file name cannot be uploaded');
    expect(ctx.emulator.mock.state.files(DEMO_APP_ID)).toHaveLength(0);
  });

  it('refuses a name that is not valid UTF-8 with exit 2 and says so, instead of an unexpected ENOENT', async () => {
    mkdirSync(ctx.temp.path('latin1'));
    writeFileSync(
      Buffer.concat([Buffer.from(ctx.temp.path('latin1/caf')), Buffer.from([0xe9]), Buffer.from('.csv')]),
      'x',
    );
    const result = await upload('latin1');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not valid UTF-8; rename the file');
    expect(ctx.emulator.mock.state.files(DEMO_APP_ID)).toHaveLength(0);
  });
});
