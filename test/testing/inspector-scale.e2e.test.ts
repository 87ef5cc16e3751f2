/**
 * The inspector with a million records and 10,000 requests in the emulator: the page loads, pages
 * and searches in a real Chromium, and the emulator's memory stays within the bound documented in
 * docs/testing.md. The emulator runs in its own process (bench/children/inspector-emulator.ts) so
 * that its RSS is its own. Timings are printed, not enforced beyond generous sanity bounds: this
 * machine's load decides them.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BrowserSession, openBrowser, screenshot } from '../support/browser.js';

const RECORDS = 1_000_000;
const REQUESTS = 10_000;
/** docs/testing.md: the emulator's RSS with a million records stays under this. */
const DOCUMENTED_RSS_BOUND = 1024 * 1024 * 1024;

interface Measure {
  rssBytes: number;
  heapUsedBytes: number;
}

let child: ChildProcessWithoutNullStreams;
let lines: Interface;
let started: Measure & { inspectorUrl: string; records: number; requests: number; fillMs: number };
let browser: BrowserSession;

function nextLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the emulator process said nothing for 120 s')), 120_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
  });
}

beforeAll(async () => {
  child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      'bench/children/inspector-emulator.ts',
      '--records',
      String(RECORDS),
      '--requests',
      String(REQUESTS),
      '--serve',
    ],
    { cwd: new URL('../..', import.meta.url).pathname, stdio: 'pipe' },
  );
  child.stderr.pipe(process.stderr);
  lines = createInterface({ input: child.stdout });
  started = JSON.parse(await nextLine());
  browser = await openBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  child?.stdin.end();
  child?.kill();
});

it('loads, pages and searches a million records within sanity bounds, memory within its documented bound', async () => {
  const { page, problems } = browser;
  expect(started).toMatchObject({ records: RECORDS, requests: REQUESTS });

  const loadStart = performance.now();
  await page.goto(started.inspectorUrl);
  await page.getByText(`50 of ${RECORDS} records`).waitFor({ timeout: 30_000 });
  await page.getByTestId('requests').locator('tbody tr').first().waitFor();
  const loadMs = performance.now() - loadStart;

  const olderStart = performance.now();
  await page.getByRole('button', { name: 'Older' }).click();
  await page.getByTestId('records').getByText('TX-0999949', { exact: true }).waitFor();
  const olderMs = performance.now() - olderStart;

  // The oldest records: the scan crosses every batch before it finds them.
  const searchStart = performance.now();
  await page.getByTestId('search').fill('TX-0000123');
  // A search that meets the server's time budget says so; "Older" scans on from where it stopped.
  // The page is current once its newest query is answered: the text of an earlier round must not
  // be read as this round's.
  const info = page.locator('#record-info');
  const current = page.locator('#record-view[aria-busy="false"]');
  await info.getByText(/match(es)? among/).waitFor({ timeout: 30_000 });
  for (let round = 0; round < 20; round++) {
    await current.waitFor({ timeout: 30_000 });
    if (!(await info.textContent())?.includes('time budget')) break;
    await page.getByRole('button', { name: 'Older' }).click();
  }
  await info.getByText(/^1 match among \d+ records scanned$/).waitFor();
  const searchMs = performance.now() - searchStart;
  await expect(page.getByTestId('records').locator('tbody tr').count()).resolves.toBe(1);
  await screenshot(page, 'million-records-search');

  child.stdin.write('measure\n');
  const after = JSON.parse(await nextLine()) as Measure;
  const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
  console.log(
    `inspector with ${RECORDS} records, ${REQUESTS} requests: fill ${started.fillMs} ms; ` +
      `page load ${Math.round(loadMs)} ms; next page ${Math.round(olderMs)} ms; search of the oldest records ${Math.round(searchMs)} ms; ` +
      `emulator RSS ${mb(started.rssBytes)} filled, ${mb(after.rssBytes)} after the page (heap ${mb(after.heapUsedBytes)})`,
  );
  expect(loadMs).toBeLessThan(60_000);
  expect(searchMs).toBeLessThan(60_000);
  expect(after.rssBytes).toBeLessThan(DOCUMENTED_RSS_BOUND);
  expect(problems).toEqual([]);
}, 180_000);
