/**
 * The inspector served by `push-api emulator`, the built CLI as a real process: the page is bundled
 * into the CLI, its address is in the banner and in `--json`, and it comes up live in Chromium with
 * what a CLI publish sent.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, expect, it } from 'vitest';
import type { EmulatorSettings } from '../../src/cli/commands/emulator.js';
import { openBrowser, screenshot } from '../support/browser.js';
import { buildCli } from '../support/cli/build.js';
import { CSV_HEADER, killChildren, makeTempDir, runCli, startCli } from '../support/cli/run.js';

let cli: string;

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);

afterEach(() => killChildren());

it('push-api emulator serves the inspector at the address it prints, live in a browser', async () => {
  const started = startCli(cli, ['emulator', '--json', '--port', '0'], { timeoutMs: 120_000 });
  let stdout = '';
  started.child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  await expect.poll(() => stdout.includes('\n'), { timeout: 10_000 }).toBe(true);
  const settings = JSON.parse(stdout.split('\n')[0]!) as EmulatorSettings;
  expect(settings.inspectorUrl).toBe(`${settings.baseUrl}/_emulator/`);

  const browser = await openBrowser();
  const temp = makeTempDir();
  try {
    const { page } = browser;
    await page.goto(settings.inspectorUrl);
    await page.getByText('live', { exact: true }).waitFor();
    const csv = temp.path('records.csv');
    writeFileSync(csv, `${CSV_HEADER}\n2025-01-31,42,USD,ada@example.com,expense,Acme from the CLI,first\n`);
    const published = await runCli(cli, ['finance', 'publish', '--app', settings.appIds[0]!, csv], {
      env: {
        PUSH_CLIENT_ID: settings.clientId,
        PUSH_CLIENT_SECRET: settings.clientSecret!,
        PUSH_AUTH_URL: settings.authUrl,
        PUSH_BASE_URL: settings.baseUrl,
        PUSH_SCOPE_BASE: settings.scopeBase,
      },
    });
    expect(published.code, published.stderr).toBe(0);
    await page.getByTestId('records').getByText('Acme from the CLI').waitFor();
    await screenshot(page, 'cli-emulator');
    expect(browser.problems).toEqual([]);
  } finally {
    await browser.close();
    temp.remove();
  }
});
