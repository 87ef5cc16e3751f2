/**
 * A real Chromium for the inspector's tests: Debian's `chromium` package driven by playwright-core
 * (Playwright's own browser download is not reachable from CI). A missing browser fails the test
 * with the remedy rather than skipping it, so a run without it cannot pass unnoticed.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Where the browser lives; `CHROMIUM_PATH` overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots land here (gitignored; CI keeps it as an artifact). */
export const ARTIFACTS_DIR = path.resolve(import.meta.dirname, '..', '..', 'test-results', 'inspector');

/** Resolves to 127.0.0.1 in the test browser only. */
export const REBOUND_NAME = 'rebound.test';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // A name of an attacker's that resolves to loopback, as after DNS rebinding; nothing else is mapped.
  `--host-resolver-rules=MAP ${REBOUND_NAME} 127.0.0.1`,
];

/** What the page complained about: console errors, uncaught exceptions, failed loads. */
export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  problems: string[];
  close(): Promise<void>;
}

export async function openBrowser(): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}: the inspector's browser tests need it. ` +
        'Install it with `apt-get install -y chromium` (.ci/run does), or set CHROMIUM_PATH.',
    );
  }
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'inspector-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // The event stream is cut when the page closes; any other failed load is a problem.
    if (!request.url().endsWith('/_emulator/events')) {
      problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
    }
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  return {
    context,
    page,
    problems,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
