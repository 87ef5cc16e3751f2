/**
 * The inspector's routes over real HTTP: the page's security headers, the record pages and their
 * bounded search, the event stream, downloads, and refusal of foreign hosts and origins. The page
 * itself is driven in a browser by inspector.e2e.test.ts.
 */

import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { PushClient } from 'push-api-client';
import { type FinanceRecord, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectorAssetsModule } from '../../scripts/build/inspector-assets.js';
import { SAMPLE_RECORD } from '../support/records.js';

let emulator: RunningEmulator;

beforeEach(async () => {
  emulator = await startEmulator();
});
afterEach(() => emulator.close());

function sdk(): PushClient {
  return new PushClient({ ...emulator.clientOptions(), env: {} });
}

/** A GET with headers fetch will not send (`Host`), answered with its status, headers and body. */
function rawGet(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${emulator.url}${path}`, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function publishBatches(batches: Partial<FinanceRecord>[][]): Promise<void> {
  const client = sdk();
  for (const batch of batches) {
    const report = await client.finance.publish(
      emulator.mock.appId,
      batch.map((fields) => ({ ...SAMPLE_RECORD, ...fields })),
    );
    expect(report.recordsSent).toBe(batch.length);
  }
}

describe('inspector page and assets', () => {
  it('serves the page with a CSP that allows scripts only from itself, and no inline or external code', async () => {
    const response = await fetch(emulator.inspectorUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = response.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      csp.split(';').map((part) => {
        const [name = '', ...values] = part.trim().split(/\s+/);
        return [name, values.join(' ')];
      }),
    );
    expect(directives.get('default-src')).toBe("'none'");
    expect(directives.get('script-src')).toBe("'self'");
    expect(directives.get('frame-ancestors')).toBe("'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const html = await response.text();
    // Every script has a src on this origin: nothing inline for the CSP to refuse.
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="inspector.js" defer>']);
    expect(html).not.toMatch(/\s(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/\son[a-z]+=/);
  });

  it('serves its script, style and icon from its own origin, each with its type', async () => {
    for (const [name, type] of [
      ['inspector.js', 'text/javascript; charset=utf-8'],
      ['inspector.css', 'text/css; charset=utf-8'],
      ['favicon.svg', 'image/svg+xml'],
    ]) {
      const response = await fetch(`${emulator.inspectorUrl}${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-type'), name).toBe(type);
      expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(await response.text(), name).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    }
    // The script never turns a string into HTML or code.
    const script = await (await fetch(`${emulator.inspectorUrl}inspector.js`)).text();
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });

  it('redirects /_emulator to the page, and refuses a POST to it', async () => {
    const redirect = await fetch(`${emulator.url}/_emulator`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/_emulator/');
    const post = await fetch(`${emulator.inspectorUrl}events`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect((await fetch(`${emulator.inspectorUrl}events`, { method: 'HEAD' })).status).toBe(405);
    expect((await fetch(emulator.inspectorUrl, { method: 'HEAD' })).status).toBe(200);
    expect(await post.json()).toMatchObject({ code: '405', success: false });
  });

  it('ships the page module built from the page sources (npm run build:inspector)', async () => {
    const generated = readFileSync(new URL('../../src/testing/inspector/assets.generated.ts', import.meta.url), 'utf8');
    expect(generated).toBe(await inspectorAssetsModule());
  });
});

describe('foreign hosts and origins (DNS rebinding, other pages)', () => {
  const paths = [
    '/_emulator/',
    '/_emulator/events',
    '/_emulator/overview',
    '/_emulator/record-page',
    '/_emulator/inspector.js',
  ];

  it('answers 403 JSON to a Host that is not a name of the emulator, on every inspector path', async () => {
    for (const path of paths) {
      const answer = await rawGet(path, { host: `rebound.example:${new URL(emulator.url).port}` });
      expect(answer.status, path).toBe(403);
      expect(answer.type, path).toContain('application/json');
      expect(answer.body, path).not.toContain('demo-app');
    }
  });

  it('answers 403 to a page on another origin that reaches it by a loopback name', async () => {
    for (const path of paths) {
      const answer = await rawGet(path, { host: new URL(emulator.url).host, origin: 'http://evil.example' });
      expect(answer.status, path).toBe(403);
    }
  });
});

describe('record pages', () => {
  it('pages through records newest first, across batches, with a cursor', async () => {
    await publishBatches([
      [{ transactionNumber: 'T0' }, { transactionNumber: 'T1' }, { transactionNumber: 'T2' }],
      [{ transactionNumber: 'T3' }, { transactionNumber: 'T4' }],
    ]);
    const first = await (await fetch(`${emulator.inspectorUrl}record-page?limit=2`)).json();
    expect(first.total).toBe(5);
    expect(first.records.map((entry: { record: FinanceRecord }) => entry.record.transactionNumber)).toEqual([
      'T4',
      'T3',
    ]);
    expect(first.nextBefore).toBe(3);
    const second = await (await fetch(`${emulator.inspectorUrl}record-page?limit=2&before=3`)).json();
    expect(second.records.map((entry: { index: number }) => entry.index)).toEqual([2, 1]);
    const deliveries = emulator.mock.state.deliveries(emulator.mock.appId);
    expect(second.records[0].requestId).toBe(deliveries[0]!.requestId);
    const last = await (await fetch(`${emulator.inspectorUrl}record-page?limit=2&before=1`)).json();
    expect(last.records.map((entry: { index: number }) => entry.index)).toEqual([0]);
    expect(last.nextBefore).toBeUndefined();
  });

  it('searches transactionNumber, vendor and identifier, case-insensitive, and nothing else', async () => {
    await publishBatches([
      [
        { transactionNumber: 'INV-77', vendor: 'Acme' },
        { vendor: 'Globex Corp', identifier: 'x@example.com' },
        { identifier: 'GLOBEX-buyer@example.com' },
        { description: 'globex in the description only' },
        { vendor: 'Quote "globex" inc' },
      ],
    ]);
    const search = async (q: string) => {
      const page = await (await fetch(`${emulator.inspectorUrl}record-page?q=${encodeURIComponent(q)}`)).json();
      return page.records.map((entry: { index: number }) => entry.index);
    };
    expect(await search('globex')).toEqual([4, 2, 1]);
    expect(await search('inv-77')).toEqual([0]);
    expect(await search('"globex"')).toEqual([4]);
    expect(await search('nowhere')).toEqual([]);
    // The text is matched as it is, not as a pattern.
    expect(await search('.*')).toEqual([]);
    expect(await search('(-[\\')).toEqual([]);
  });

  it('bounds a search by its result limit and its time budget, and says when it stopped early', async () => {
    await publishBatches([
      Array.from({ length: 30 }, (_, i) => ({ vendor: `Vendor ${i}` })),
      Array.from({ length: 30 }, (_, i) => ({ vendor: `Vendor ${30 + i}` })),
    ]);
    const { state, appId } = emulator.mock;
    const limited = state.recordPage(appId, { search: 'vendor', limit: 5 });
    expect(limited.records.map((entry) => entry.index)).toEqual([59, 58, 57, 56, 55]);
    expect(limited).toMatchObject({ nextBefore: 55, complete: true, scanned: 5 });
    const outOfTime = state.recordPage(appId, { search: 'vendor', timeBudgetMs: -1 });
    expect(outOfTime).toMatchObject({ records: [], complete: false, nextBefore: 60 });
  });

  it('refuses a limit or cursor that is not a non-negative integer, naming it', async () => {
    const response = await fetch(`${emulator.inspectorUrl}record-page?limit=-3`);
    expect(response.status).toBe(400);
    expect((await response.json()).message).toContain('limit');
  });
});

describe('overview, events and downloads', () => {
  it('never shows a token value or a client secret', async () => {
    await publishBatches([[{}]]);
    const text = await (await fetch(`${emulator.inspectorUrl}overview`)).text();
    const [token] = emulator.mock.state.tokens;
    expect(text).toContain('connector.write');
    expect(text).not.toContain(token!.token);
    expect(text).not.toContain(emulator.mock.clientSecret);
  });

  it('streams the overview as server-sent events, again when a request arrives', async () => {
    const controller = new AbortController();
    const response = await fetch(`${emulator.inspectorUrl}events`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const until = async (pattern: RegExp) => {
      const deadline = Date.now() + 5000;
      while (!pattern.test(text) && Date.now() < deadline) text += (await reader.read()).value ?? '';
      return pattern.test(text);
    };
    expect(await until(/event: overview\ndata: \{.*"total":0/)).toBe(true);
    await publishBatches([[{ transactionNumber: 'over-the-stream' }]]);
    expect(await until(/"records":1/)).toBe(true);
    controller.abort();
  });

  it('caps the open event streams, and takes a new one once another closes', async () => {
    const streams = Array.from({ length: 32 }, () => new AbortController());
    const opened = await Promise.all(
      streams.map((controller) => fetch(`${emulator.inspectorUrl}events`, { signal: controller.signal })),
    );
    expect(opened.map((response) => response.status)).toEqual(streams.map(() => 200));
    const refused = await fetch(`${emulator.inspectorUrl}events`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    streams[0]!.abort();
    let again: Response | undefined;
    for (let attempt = 0; attempt < 50 && again?.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await fetch(`${emulator.inspectorUrl}events`);
      if (again.status !== 200) await again.body?.cancel();
    }
    expect(again?.status).toBe(200);
    await again?.body?.cancel();
    for (const controller of streams) controller.abort();
  });

  it('sends a file as an opaque attachment, never in the type it was uploaded with', async () => {
    const urls = await sdk().uploads.getUploadUrls(emulator.mock.appId, ['page.html']);
    const put = await fetch(urls['page.html']!, {
      method: 'PUT',
      headers: { 'content-type': 'text/html' },
      body: '<script>alert(1)</script>',
    });
    expect(put.status).toBe(200);
    expect(emulator.mock.state.file(emulator.mock.appId, 'page.html')?.contentType).toBe('text/html');
    const response = await fetch(`${emulator.inspectorUrl}files/demo-app/page.html`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''page.html");
    expect(response.headers.get('content-security-policy')).toContain('sandbox');
    expect(await response.text()).toBe('<script>alert(1)</script>');
    expect((await fetch(`${emulator.inspectorUrl}files/demo-app/missing.csv`)).status).toBe(404);
  });

  it("names a downloaded file so that its quotes and parentheses cannot end the header's value", async () => {
    const name = "it's (1).csv";
    const urls = await sdk().uploads.getUploadUrls(emulator.mock.appId, [name]);
    expect((await fetch(urls[name]!, { method: 'PUT', body: 'a\n' })).status).toBe(200);
    const response = await fetch(`${emulator.inspectorUrl}files/demo-app/${encodeURIComponent(name)}`);
    expect(response.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''it%27s%20%281%29.csv");
  });
});
