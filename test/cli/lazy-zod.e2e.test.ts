/**
 * The CLI publishes valid rows without loading zod, whose heap would otherwise count in every
 * publish's memory: the built CLI, in a process where zod cannot be loaded at all. A row that is
 * not plainly valid, which needs zod to name its problems, is the control: it fails there.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, killChildren, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
afterAll(killChildren);

const withoutZod = {
  NODE_OPTIONS: `--import ${pathToFileURL(resolve(import.meta.dirname, '../support/without-zod.mjs')).href}`,
};

describe('zod in the CLI', () => {
  it('is never loaded to publish a file of valid rows', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(1200)}\n`);
    const result = await runCli(
      ctx.cli,
      ['finance', 'publish', '--app', DEMO_APP_ID, '--json', ctx.temp.path('in.csv')],
      {
        env: { ...emulatorEnv(ctx.emulator), ...withoutZod },
      },
    );
    expect(result.stderr).not.toContain('zod is blocked');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ recordsSent: 1200, recordsInvalid: 0 });
    expect(ctx.emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(1200);
  });

  it('is what an invalid row asks for, so that row fails in the same process (the control)', async () => {
    writeFileSync(ctx.temp.path('bad.csv'), `${CSV_HEADER}\n${csvRows(3).replace(/USD/, 'us dollars')}\n`);
    const result = await runCli(
      ctx.cli,
      ['finance', 'publish', '--app', DEMO_APP_ID, '--json', ctx.temp.path('bad.csv')],
      {
        env: { ...emulatorEnv(ctx.emulator), ...withoutZod },
      },
    );
    expect(result.code).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toContain('zod is blocked');
  });
});
