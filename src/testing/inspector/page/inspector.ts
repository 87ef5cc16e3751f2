/**
 * The inspector page's script, run in the browser. Built by scripts/build/inspector-assets.ts into
 * a string the emulator serves; no framework, no dependency.
 *
 * Everything shown comes from whoever called the emulator (a record's description, a file name),
 * so values are only ever set with `textContent`: nothing here parses a string as HTML.
 */

interface RequestSummary {
  id: string;
  at: number;
  method: string;
  path: string;
  status: number;
  durationMs: number | null;
  fault: string | null;
}

interface FileSummary {
  name: string;
  size: number;
  sha256: string;
  uploadCount: number;
  bytesKept: boolean;
}

interface Overview {
  now: number;
  apps: { appId: string; records: number; files: FileSummary[] }[];
  tokens: { clientId: string; scopes: string[]; issuedAt: number; expiresAt: number; revoked: boolean }[];
  tokenCount: number;
  faults: { match: { operation?: unknown } | null; status: number | null; times: number | null; drop: string | null }[];
  requests: { total: number; recent: RequestSummary[] };
}

interface RecordPage {
  total: number;
  records: { index: number; requestId: string; record: Record<string, unknown> }[];
  nextBefore: number | undefined;
  scanned: number;
  complete: boolean;
}

const PAGE_SIZE = 50;

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page lacks #${id}`);
  return element as T;
}

/** A table cell holding `value` as text. */
function cell(value: unknown, className?: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = value === undefined || value === null ? '' : String(value);
  if (className) td.className = className;
  return td;
}

function row(cells: HTMLTableCellElement[]): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.append(...cells);
  return tr;
}

function time(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}

function say(text: string, isError = false): void {
  const message = byId('message');
  message.textContent = text;
  message.classList.toggle('error', isError);
}

async function control(method: string, path: string, body?: unknown): Promise<void> {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as { message?: string; error?: string };
  if (!response.ok) throw new Error(answer.message ?? answer.error ?? `HTTP ${response.status}`);
}

/** Cursors of the pages above the one shown, so "Newer" can go back. */
const newerCursors: (number | undefined)[] = [];
let shownBefore: number | undefined;
let olderCursor: number | undefined;
let shownTotal = -1;
let recordRequest = 0;

function selectedApp(): string {
  return byId<HTMLSelectElement>('app').value;
}

function showRequests(data: Overview): void {
  byId('request-count').textContent =
    `(${data.requests.total} in the log, newest ${data.requests.recent.length} shown)`;
  byId('requests').replaceChildren(
    ...data.requests.recent.map((entry) =>
      row([
        cell(time(entry.at)),
        cell(entry.method),
        cell(entry.path, 'wide'),
        cell(entry.status === 0 ? 'dropped' : entry.status, `s${String(entry.status)[0]}`),
        cell(entry.durationMs === null ? '' : `${entry.durationMs} ms`),
        cell(entry.fault ?? ''),
        cell(entry.id),
      ]),
    ),
  );
}

function showFiles(data: Overview): void {
  const rows: HTMLTableRowElement[] = [];
  for (const app of data.apps) {
    for (const file of app.files) {
      const link = cell('');
      if (file.bytesKept) {
        const anchor = document.createElement('a');
        anchor.href = `files/${encodeURIComponent(app.appId)}/${encodeURIComponent(file.name)}`;
        anchor.textContent = 'download';
        link.append(anchor);
      } else {
        link.textContent = 'bytes not kept';
      }
      rows.push(
        row([
          cell(app.appId),
          cell(file.name, 'wide'),
          cell(bytes(file.size)),
          cell(file.sha256),
          cell(file.uploadCount),
          link,
        ]),
      );
    }
  }
  byId('files').replaceChildren(...rows);
}

function showTokens(data: Overview): void {
  byId('token-count').textContent = `(${data.tokenCount} issued)`;
  byId('tokens').replaceChildren(
    ...data.tokens.map((token) =>
      row([
        cell(token.clientId),
        cell(token.scopes.join(' ')),
        cell(time(token.issuedAt)),
        cell(time(token.expiresAt)),
        cell(token.revoked ? 'revoked' : token.expiresAt <= data.now ? 'expired' : 'active'),
      ]),
    ),
  );
}

function showFaults(data: Overview): void {
  byId('faults').textContent =
    data.faults.length === 0
      ? 'No faults.'
      : `Active: ${data.faults
          .map((fault) => {
            const operation = fault.match?.operation === undefined ? 'any' : String(fault.match.operation);
            const effect = fault.status ?? `drop ${fault.drop ?? ''}`;
            return `${operation} → ${effect} ×${fault.times ?? '∞'}`;
          })
          .join(', ')}`;
}

function showApps(data: Overview): void {
  const select = byId<HTMLSelectElement>('app');
  const current = select.value;
  const ids = data.apps.map((app) => app.appId);
  if (ids.join('\n') !== [...select.options].map((option) => option.value).join('\n')) {
    select.replaceChildren(
      ...ids.map((id) => {
        const option = document.createElement('option');
        option.value = id;
        option.textContent = id;
        return option;
      }),
    );
    if (ids.includes(current)) select.value = current;
  }
}

async function loadRecords(before: number | undefined): Promise<void> {
  const ticket = ++recordRequest;
  // Busy until the newest query is answered, so that a reader (or a test) knows the page is current.
  const view = byId('record-view');
  view.setAttribute('aria-busy', 'true');
  try {
    await showRecordPage(ticket, before);
  } finally {
    if (ticket === recordRequest) view.setAttribute('aria-busy', 'false');
  }
}

async function showRecordPage(ticket: number, before: number | undefined): Promise<void> {
  const params = new URLSearchParams({ app: selectedApp(), limit: String(PAGE_SIZE) });
  if (before !== undefined) params.set('before', String(before));
  const search = byId<HTMLInputElement>('search').value.trim();
  if (search) params.set('q', search);
  const response = await fetch(`record-page?${params}`);
  if (!response.ok) throw new Error(`records: HTTP ${response.status}`);
  const page = (await response.json()) as RecordPage;
  // A slower answer to an older query must not replace a newer one.
  if (ticket !== recordRequest) return;
  shownBefore = before;
  olderCursor = page.nextBefore;
  shownTotal = page.total;
  byId('records').replaceChildren(
    ...page.records.map(({ index, requestId, record }) =>
      row([
        cell(index),
        cell(typeof record.created === 'number' ? time(record.created) : record.created),
        cell(record.type),
        cell(`${String(record.amount)} ${String(record.currency)}`),
        cell(record.vendor, 'wide'),
        cell(record.identifier, 'wide'),
        cell(record.transactionNumber, 'wide'),
        cell(record.description, 'wide'),
        cell(requestId),
      ]),
    ),
  );
  const where = search
    ? `${page.records.length} match${page.records.length === 1 ? '' : 'es'} among ${page.scanned} records scanned` +
      (page.complete ? '' : ' (stopped at the time budget: "Older" scans on)')
    : `${page.records.length} of ${page.total} records`;
  byId('record-info').textContent = where;
  byId<HTMLButtonElement>('older').disabled = olderCursor === undefined;
  byId<HTMLButtonElement>('newer').disabled = newerCursors.length === 0;
}

function reloadRecords(): void {
  newerCursors.length = 0;
  loadRecords(undefined).catch((error: unknown) => say(String(error), true));
}

function show(data: Overview): void {
  byId('clock').textContent = `emulator clock ${time(data.now)}`;
  showApps(data);
  showRequests(data);
  showFiles(data);
  showTokens(data);
  showFaults(data);
  const app = data.apps.find((candidate) => candidate.appId === selectedApp());
  // Follow new records live on the first page; a page further back or a search stays put.
  const onFirstPage = newerCursors.length === 0 && !byId<HTMLInputElement>('search').value.trim();
  if ((app?.records ?? 0) !== shownTotal && onFirstPage) reloadRecords();
}

/**
 * A browser opens at most six HTTP/1.1 connections to one origin, and an event stream holds one for
 * as long as its tab is open: six inspector tabs would leave none for a seventh tab, a record page
 * or a control. So one tab of the browser holds the stream (the holder of a Web Lock, which passes
 * to a waiting tab when it closes) and hands each overview to the others over a BroadcastChannel.
 * Where the page is not a secure context (a `--public-url` that is not loopback), Web Locks do not
 * exist, and each tab opens its own stream.
 */
const FEED = 'push-api-emulator-feed';

type FeedMessage = { kind: 'overview'; overview: Overview } | { kind: 'down' };

function showStatus(live: boolean): void {
  const status = byId('connection');
  status.textContent = live ? 'live' : 'disconnected, retrying…';
  status.className = live ? 'status live' : 'status down';
}

/** Opens this tab's event stream, passing what it hears to the other tabs when there is a channel. */
function openStream(channel: BroadcastChannel | undefined): void {
  const events = new EventSource('events');
  events.addEventListener('open', () => showStatus(true));
  events.addEventListener('error', () => {
    showStatus(false);
    channel?.postMessage({ kind: 'down' } satisfies FeedMessage);
  });
  events.addEventListener('overview', (event) => {
    const overview = JSON.parse((event as MessageEvent<string>).data) as Overview;
    showStatus(true);
    show(overview);
    channel?.postMessage({ kind: 'overview', overview } satisfies FeedMessage);
  });
}

function connect(): void {
  if (!window.isSecureContext || !('locks' in navigator) || typeof BroadcastChannel !== 'function') {
    openStream(undefined);
    return;
  }
  const channel = new BroadcastChannel(FEED);
  let heard = false;
  channel.addEventListener('message', (event: MessageEvent<FeedMessage>) => {
    heard = true;
    showStatus(event.data.kind === 'overview');
    if (event.data.kind === 'overview') show(event.data.overview);
  });
  // Until the tab holding the stream has news, show the overview of the moment.
  fetch('overview')
    .then((response) => (response.ok ? (response.json() as Promise<Overview>) : Promise.reject(response.status)))
    .then(
      (overview) => {
        if (heard) return;
        showStatus(true);
        show(overview);
      },
      () => showStatus(false),
    );
  // Held until this tab closes: then the next waiting tab opens the stream.
  void navigator.locks.request(FEED, () => new Promise<never>(() => openStream(channel)));
}

function wireControls(): void {
  const faultForm = byId<HTMLFormElement>('fault-form');
  faultForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const fields = new FormData(faultForm);
    const rule: Record<string, unknown> = {
      match: { operation: String(fields.get('operation')) },
      status: Number(fields.get('status')),
      times: Number(fields.get('times')),
    };
    const retryAfter = String(fields.get('retryAfter') ?? '').trim();
    if (retryAfter) rule.retryAfter = Number(retryAfter);
    control('POST', 'faults', rule).then(
      () => say('Fault added.'),
      (error: unknown) => say(`Fault refused: ${String(error)}`, true),
    );
  });
  byId('clear-faults').addEventListener('click', () => {
    control('DELETE', 'faults').then(
      () => say('Faults cleared.'),
      (error: unknown) => say(String(error), true),
    );
  });
  const clockForm = byId<HTMLFormElement>('clock-form');
  clockForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const seconds = Number(new FormData(clockForm).get('advanceSeconds'));
    control('POST', 'clock', { advanceMs: seconds * 1000 }).then(
      () => say(`Clock moved ${seconds} s forward.`),
      (error: unknown) => say(String(error), true),
    );
  });
  byId('reset').addEventListener('click', () => {
    control('POST', 'reset', {}).then(
      () => say('Emulator reset.'),
      (error: unknown) => say(String(error), true),
    );
  });
  let typing: ReturnType<typeof setTimeout> | undefined;
  byId('search').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(reloadRecords, 250);
  });
  byId('app').addEventListener('change', reloadRecords);
  byId('older').addEventListener('click', () => {
    if (olderCursor === undefined) return;
    newerCursors.push(shownBefore);
    loadRecords(olderCursor).catch((error: unknown) => say(String(error), true));
  });
  byId('newer').addEventListener('click', () => {
    if (newerCursors.length === 0) return;
    loadRecords(newerCursors.pop()).catch((error: unknown) => say(String(error), true));
  });
}

wireControls();
connect();
