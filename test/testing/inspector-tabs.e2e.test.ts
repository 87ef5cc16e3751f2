/**
 * Many inspector tabs in one browser. Chromium opens at most six HTTP/1.1 connections to an origin,
 * and an event stream holds one while its tab is open: with a stream per tab, a seventh tab never
 * loaded, and six tabs left no connection for a record page or a control. One tab holds the stream
 * and the others follow it; when it closes, another takes over.
 */

import type { Page } from 'playwright-core';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserSession, openBrowser } from '../support/browser.js';

const TABS = 8;
let emulator: RunningEmulator;
let session: BrowserSession;

beforeAll(async () => {
  emulator = await startEmulator();
  session = await openBrowser();
});
afterAll(async () => {
  await session?.close();
  await emulator?.close();
});

/** A request the emulator logs, with a path each tab can be asked to show. */
async function knock(path: string): Promise<void> {
  const response = await fetch(`${emulator.url}${path}`);
  await response.body?.cancel();
}

async function shows(page: Page, path: string): Promise<void> {
  await page.locator('#requests td', { hasText: path }).first().waitFor({ timeout: 5000 });
}

describe('inspector in many tabs', () => {
  it(`keeps ${TABS} tabs live, with connections left for their record pages and controls`, async () => {
    const pages = [session.page];
    for (let i = 1; i < TABS; i++) pages.push(await session.context.newPage());
    for (const page of pages) {
      await page.goto(emulator.inspectorUrl, { timeout: 5000 });
      await page.locator('#connection.live').waitFor({ timeout: 5000 });
    }
    await knock('/first-knock');
    for (const page of pages) await shows(page, '/first-knock');

    // A control from the last tab still gets a connection.
    const last = pages.at(-1) as Page;
    await last.locator('#reset').click();
    await last.locator('#message', { hasText: 'Emulator reset.' }).waitFor({ timeout: 5000 });

    // The tab holding the stream closes: another takes it over, and every tab left follows.
    await (pages.shift() as Page).close();
    await knock('/after-the-first-tab-closed');
    for (const page of pages) await shows(page, '/after-the-first-tab-closed');
    expect(session.problems).toEqual([]);
  });
});
