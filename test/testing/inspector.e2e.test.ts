/**
 * The web inspector in a real Chromium: what the SDK sends appears live, the page steers the
 * emulator, and hostile record text stays text. Each test also checks that the browser logged no
 * error (a CSP violation, a missing icon, a failed load would all show up there).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PushClient } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BrowserSession, openBrowser, REBOUND_NAME, screenshot } from '../support/browser.js';
import { clientFor } from '../support/clients.js';
import { SAMPLE_RECORD } from '../support/records.js';

let emulator: RunningEmulator;
let browser: BrowserSession;

function client(options: { maxRetries?: number } = {}): PushClient {
  return clientFor(emulator, options);
}

beforeEach(async () => {
  emulator = await startEmulator();
  browser = await openBrowser();
  await browser.page.goto(emulator.inspectorUrl);
  await browser.page.getByText('live', { exact: true }).waitFor();
});

afterEach(async () => {
  // Undefined when the browser could not start: that failure is the one to report.
  const problems = [...(browser?.problems ?? [])];
  await browser?.close();
  await emulator.close();
  expect(problems).toEqual([]);
});

describe('inspector page', () => {
  it('shows records, a file and a token sent with the SDK as they arrive, without reloading', async () => {
    const { page } = browser;
    const sdk = client();
    await sdk.finance.publish(emulator.mock.appId, [
      { ...SAMPLE_RECORD, transactionNumber: 'TX-live-1' },
      { ...SAMPLE_RECORD, transactionNumber: 'TX-live-2', vendor: 'Globex' },
    ]);
    const content = 'email\nada@example.com\n';
    await sdk.uploads.upload(emulator.mock.appId, [{ name: 'users.csv', data: content }]);

    const records = page.getByTestId('records');
    await records.getByText('TX-live-2').waitFor();
    await expect(records.locator('tbody tr').count()).resolves.toBe(2);
    const sha256 = createHash('sha256').update(content).digest('hex');
    const files = page.getByTestId('files');
    await files.getByText(sha256).waitFor();
    await expect(files.getByText('users.csv').count()).resolves.toBe(1);
    const requests = page.getByTestId('requests');
    await requests.getByText('/services/push/v1/customer/apps/demo-app/finance').waitFor();
    const [financeEntry] = emulator.mock.state.requests.filter((entry) => entry.operation === 'finance');
    await requests.getByText(financeEntry!.id).waitFor();

    // The download link gives back the uploaded bytes, as an attachment.
    const href = await files.getByRole('link', { name: 'download' }).getAttribute('href');
    const download = await page.request.get(new URL(href!, emulator.inspectorUrl).href);
    expect(await download.text()).toBe(content);
    expect(download.headers()['content-disposition']).toContain('attachment');

    // Tokens: their scopes, never their value.
    const tokens = page.getByTestId('tokens');
    await tokens.getByText(`${emulator.mock.scopeBase}/connector.write`).waitFor();
    const tokenValue = emulator.mock.state.tokens[0]!.token;
    expect(await page.content()).not.toContain(tokenValue);
    await screenshot(page, 'live-records-and-files');
  });

  it('shows a record holding <script> and <img onerror> as text, running neither', async () => {
    const { page } = browser;
    const script = '<script>window.__pwned = "script"</script>';
    const image = '<img src=x onerror="window.__pwned = \'img\'">';
    await client().finance.publish(emulator.mock.appId, [
      { ...SAMPLE_RECORD, vendor: script, description: image, transactionNumber: 'TX-hostile' },
    ]);
    const records = page.getByTestId('records');
    await records.getByText('TX-hostile').waitFor();
    await expect(records.getByText(script, { exact: true }).count()).resolves.toBe(1);
    await expect(records.getByText(image, { exact: true }).count()).resolves.toBe(1);
    await expect(page.locator('[data-testid="records"] img, [data-testid="records"] script').count()).resolves.toBe(0);
    // Give an injected image time to fail its load and fire onerror, had it been parsed.
    await page.waitForTimeout(300);
    await expect(page.evaluate(() => (window as { __pwned?: string }).__pwned)).resolves.toBeUndefined();

    // Searching finds it by its hostile vendor, still as text.
    await page.getByTestId('search').fill('<script>');
    await records.getByText('1 match among').waitFor();
    await expect(records.getByText(script, { exact: true }).count()).resolves.toBe(1);
    await screenshot(page, 'hostile-record-as-text');
  });

  it('marks the records busy until the newest query is answered, whatever order the answers come in', async () => {
    const { page } = browser;
    await client().finance.publish(emulator.mock.appId, [
      { ...SAMPLE_RECORD, transactionNumber: 'TX-first', vendor: 'Acme' },
      { ...SAMPLE_RECORD, transactionNumber: 'TX-second', vendor: 'Globex' },
    ]);
    const records = page.getByTestId('records');
    await records.getByText('TX-second').waitFor();
    // Hold every record-page answer until the test lets it go.
    const held: { query: string; release: () => void }[] = [];
    await page.route('**/record-page?*', async (route) => {
      await new Promise<void>((release) => held.push({ query: route.request().url(), release }));
      await route.continue();
    });
    const view = page.locator('#record-view');
    await page.getByTestId('search').fill('Acme');
    await expect.poll(() => held.length, { timeout: 30_000 }).toBe(1);
    await expect(view.getAttribute('aria-busy')).resolves.toBe('true');
    await page.getByTestId('search').fill('Globex');
    await expect.poll(() => held.length, { timeout: 30_000 }).toBe(2);
    expect(held.map(({ query }) => new URL(query).searchParams.get('q'))).toEqual(['Acme', 'Globex']);

    // The older answer lands first: it is dropped, and the view stays busy.
    held[0]!.release();
    await page.waitForTimeout(200);
    await expect(view.getAttribute('aria-busy')).resolves.toBe('true');
    await expect(records.getByText('match among').count()).resolves.toBe(0);
    held[1]!.release();
    await page.locator('#record-view[aria-busy="false"]').waitFor();
    await expect(page.locator('#record-info').textContent()).resolves.toBe('1 match among 2 records scanned');
    await expect(records.getByText('TX-second').count()).resolves.toBe(1);
    await expect(records.getByText('TX-first').count()).resolves.toBe(0);
    await page.unroute('**/record-page?*');
  });

  // (eval cannot be tried from here: the test's own evaluate is exempt from the page's CSP. The
  // header test in inspector-routes.test.ts checks that the policy has no 'unsafe-eval'.)
  it('runs under a CSP the browser enforces: no injected inline script, no outside connection', async () => {
    const { page } = browser;
    const outcome = await page.evaluate(async () => {
      const script = document.createElement('script');
      script.textContent = 'window.__inline = true';
      document.body.append(script);
      const outside = await fetch('http://127.0.0.2:9/x').then(
        () => 'loaded',
        () => 'refused',
      );
      return { inline: (window as { __inline?: boolean }).__inline ?? false, outside };
    });
    const refusals = browser.problems.splice(0);
    expect(outcome).toEqual({ inline: false, outside: 'refused' });
    // The browser reports each refusal on the console; those, and only those, are expected here.
    expect(refusals.some((problem) => problem.includes("'script-src 'self''"))).toBe(true);
    expect(refusals.some((problem) => problem.includes("connect-src 'self'"))).toBe(true);
    for (const problem of refusals) expect(problem).toMatch(/Content Security Policy/);
  });

  it('refuses the page, its stream and its data to a name rebound to 127.0.0.1 (DNS rebinding)', async () => {
    const { page } = browser;
    const rebound = `http://${REBOUND_NAME}:${new URL(emulator.url).port}`;
    // Off the inspector first: its stream and the page reads a new record starts would otherwise be
    // cut by the navigations below and reported as aborted requests among the refusals.
    await page.goto('about:blank');
    browser.problems.splice(0);
    await client().finance.publish(emulator.mock.appId, [{ ...SAMPLE_RECORD, transactionNumber: 'TX-private' }]);
    for (const path of ['/_emulator/', '/_emulator/events', '/_emulator/record-page', '/_emulator/overview']) {
      const response = await page.goto(`${rebound}${path}`);
      expect(response?.status(), path).toBe(403);
      expect(await page.content(), path).not.toContain('TX-private');
    }
    const refusals = browser.problems.splice(0);
    expect(refusals.length).toBeGreaterThan(0);
    for (const problem of refusals) expect(problem).toMatch(/403|Failed to load resource/);
  });

  it('refuses what a page on another local port loads from it without an Origin: img, script, no-cors fetch', async () => {
    const probes = ['img', 'script', 'fetch'].map(
      (kind) => `${emulator.url}/services/push/v1/customer/apps/demo-app/upload?filenames=${kind}.csv`,
    );
    const elsewhere = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<img src="${probes[0]}"><script src="${probes[1]}"></script>` +
          `<script>fetch(${JSON.stringify(probes[2])}, { mode: 'no-cors' }).catch(() => {})</script>`,
      );
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const { page } = browser;
      await page.goto('about:blank');
      browser.problems.splice(0);
      await page.goto(`http://localhost:${(elsewhere.address() as AddressInfo).port}/`);
      await page.waitForLoadState('networkidle', { timeout: 10_000 });
      // Before Sec-Fetch-Site was read, each reached the service and was logged (401, no token).
      expect(emulator.mock.state.requests.filter((request) => request.operation === 'upload-urls')).toEqual([]);
    } finally {
      elsewhere.closeAllConnections();
      await new Promise((resolve) => elsewhere.close(resolve));
    }
    for (const problem of browser.problems.splice(0)) expect(problem).toMatch(/403|Failed to load resource|ERR_/);
  });

  it('refuses a page on another local port that navigates itself to a service route: the fault set stays', async () => {
    const fault = emulator.mock.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
    const target = `${emulator.url}/services/push/v1/customer/apps/demo-app/finance`;
    const elsewhere = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      // No click needed: a page may navigate itself anywhere.
      res.end(`<script>location.href = ${JSON.stringify(target)}</script>`);
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const { page } = browser;
      await page.goto('about:blank');
      browser.problems.splice(0);
      const landed = page.waitForURL(target, { timeout: 10_000 });
      await page.goto(`http://localhost:${(elsewhere.address() as AddressInfo).port}/`);
      await landed;
      await page.waitForLoadState('load');
      // Before, the navigation met the fault (503) and used it up, and the log counted it.
      expect(await page.textContent('body')).toContain('Forbidden: requests from pages on other sites');
      expect(emulator.mock.faults.list()).toHaveLength(1);
      expect(emulator.mock.state.requests.filter((request) => request.operation === 'finance')).toEqual([]);
    } finally {
      fault.remove();
      elsewhere.closeAllConnections();
      await new Promise((resolve) => elsewhere.close(resolve));
    }
    for (const problem of browser.problems.splice(0)) expect(problem).toMatch(/403|Failed to load resource|ERR_/);
  });

  it('adds a fault from the page, and the next SDK call meets it', async () => {
    const { page } = browser;
    const form = page.getByTestId('fault-form');
    await form.locator('[name="operation"]').selectOption('finance');
    await form.locator('[name="status"]').fill('503');
    await form.locator('[name="times"]').fill('1');
    await form.locator('[name="retryAfter"]').fill('7');
    await form.getByRole('button', { name: 'Add fault' }).click();
    await page.getByText('finance → 503 ×1').waitFor();
    expect(emulator.mock.faults.list()).toMatchObject([
      { match: { operation: 'finance' }, status: 503, times: 1, retryAfter: 7 },
    ]);

    const report = await client({ maxRetries: 0 }).finance.publish(emulator.mock.appId, [SAMPLE_RECORD]);
    expect(report).toMatchObject({ recordsSent: 0, recordsFailed: 1 });
    const seen = emulator.mock.state.requests.find((entry) => entry.operation === 'finance');
    expect(seen).toMatchObject({ status: 503, fault: 'status' });
    await page.getByTestId('requests').getByText('status', { exact: true }).waitFor();
    await page.getByText('No faults.').waitFor();
    await screenshot(page, 'fault-met');
  });

  it('clears faults, moves the clock and resets from the page', async () => {
    const { page } = browser;
    await client().finance.publish(emulator.mock.appId, [{ ...SAMPLE_RECORD, transactionNumber: 'TX-before-reset' }]);
    await page.getByTestId('records').getByText('TX-before-reset').waitFor();
    emulator.mock.faults.add({ match: { operation: 'upload' }, status: 500, times: 5 });
    await page.getByText('upload → 500 ×5').waitFor();

    await page.getByRole('button', { name: 'Clear faults' }).click();
    await page.getByText('No faults.').waitFor();
    expect(emulator.mock.faults.list()).toEqual([]);

    const before = emulator.mock.now();
    await page.getByTestId('clock-form').locator('[name="advanceSeconds"]').fill('7200');
    await page.getByRole('button', { name: 'Advance' }).click();
    await page.getByText('Clock moved 7200 s forward.').waitFor();
    expect(emulator.mock.now() - before).toBeGreaterThanOrEqual(7_200_000);

    await page.getByTestId('reset').click();
    await page.getByText('Emulator reset.').waitFor();
    expect(emulator.mock.state.recordCount()).toBe(0);
    await page.getByText('0 of 0 records').waitFor();
    await expect(page.getByTestId('records').locator('tbody tr').count()).resolves.toBe(0);
  });
});
