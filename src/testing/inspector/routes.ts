/**
 * The web inspector's routes on the HTTP emulator: the page and its three assets, the live event
 * stream, the overview and record pages as JSON, and file downloads. All are GET and read-only;
 * the page steers the emulator through the control routes.
 *
 * Record text, file names and paths come from whoever called the emulator, so every answer here is
 * locked down: a Content-Security-Policy that allows only this origin's script and style, no
 * framing, no MIME sniffing, and downloads sent as opaque attachments in a sandbox.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PushApiEmulator } from '../handler.js';
import { INSPECTOR_ASSETS } from './assets.generated.js';
import { MAX_EVENT_STREAMS, streamEvents } from './events.js';
import { inspectorOverview } from './overview.js';

/** Where the page is served. */
export const INSPECTOR_PATH = '/_emulator/';
/** Redirected to the page. */
export const INSPECTOR_REDIRECT_PATH = '/_emulator';

const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Data and downloads: nothing in them may run, even when opened as a page. */
const DATA_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox";

function securityHeaders(csp: string): Record<string, string> {
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

const ASSET_ROUTES: Record<string, { body: string; type: string }> = {
  [INSPECTOR_PATH]: { body: INSPECTOR_ASSETS.html, type: 'text/html; charset=utf-8' },
  [`${INSPECTOR_PATH}inspector.js`]: { body: INSPECTOR_ASSETS.js, type: 'text/javascript; charset=utf-8' },
  [`${INSPECTOR_PATH}inspector.css`]: { body: INSPECTOR_ASSETS.css, type: 'text/css; charset=utf-8' },
  [`${INSPECTOR_PATH}favicon.svg`]: { body: INSPECTOR_ASSETS.favicon, type: 'image/svg+xml' },
};

const FILES_PREFIX = `${INSPECTOR_PATH}files/`;

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...securityHeaders(DATA_CSP), ...extra, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** An error in the emulator's own JSON shape, as its other `/_emulator/` routes answer. */
function sendError(res: ServerResponse, status: number, message: string, extra?: Record<string, string>): void {
  sendJson(res, status, { code: String(status), message, success: false }, extra);
}

function numberParam(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : Number.NaN;
}

function recordPage(emulator: PushApiEmulator, url: URL, res: ServerResponse): void {
  const appId = url.searchParams.get('app') ?? emulator.appId;
  const before = numberParam(url, 'before');
  const limit = numberParam(url, 'limit');
  for (const [name, value] of [
    ['before', before],
    ['limit', limit],
  ] as const) {
    if (Number.isNaN(value)) {
      sendError(res, 400, `Bad Request: ${name} must be a non-negative integer`);
      return;
    }
  }
  const search = (url.searchParams.get('q') ?? '').slice(0, 200);
  sendJson(res, 200, { appId, ...emulator.state.recordPage(appId, { before, limit, search }) });
}

function download(emulator: PushApiEmulator, url: URL, res: ServerResponse): void {
  const [appId, name, ...rest] = url.pathname.slice(FILES_PREFIX.length).split('/').map(decodeOrEmpty);
  const file = appId && name && rest.length === 0 ? emulator.state.file(appId, name) : undefined;
  if (!file?.bytes) {
    sendError(res, 404, file ? 'Not Found: the bytes of this file were not kept' : 'Not Found: no such file');
    return;
  }
  res.writeHead(200, {
    ...securityHeaders(DATA_CSP),
    // Never the uploaded Content-Type: an uploaded HTML file must not render on this origin.
    'content-type': 'application/octet-stream',
    'content-length': String(file.bytes.byteLength),
    'content-disposition': `attachment; filename*=UTF-8''${rfc5987(file.name)}`,
  });
  res.end(file.bytes);
}

/** A file name as an RFC 5987 value: encodeURIComponent leaves `'()*!` as they are, which it must not. */
function rfc5987(name: string): string {
  return encodeURIComponent(name).replace(/['()*!]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

function decodeOrEmpty(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

/**
 * Answers the inspector's paths; false for any other path. Runs after the server's Host check, so
 * a page on another origin that rebinds its name to loopback cannot read the stream or the JSON.
 */
export function serveInspector(
  emulator: PushApiEmulator,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  const { pathname } = url;
  if (pathname === INSPECTOR_REDIRECT_PATH) {
    res.writeHead(308, { location: INSPECTOR_PATH, ...securityHeaders(DATA_CSP) });
    res.end();
    return true;
  }
  const asset = ASSET_ROUTES[pathname];
  const isData =
    pathname === `${INSPECTOR_PATH}events` ||
    pathname === `${INSPECTOR_PATH}overview` ||
    pathname === `${INSPECTOR_PATH}record-page` ||
    pathname.startsWith(FILES_PREFIX);
  if (!asset && !isData) return false;
  // HEAD only for the static files: a HEAD of the event stream would hold a poller for nothing.
  const allowed = asset ? ['GET', 'HEAD'] : ['GET'];
  if (!allowed.includes(req.method ?? '')) {
    sendError(res, 405, `Method Not Allowed: use ${allowed.join(' or ')}`, { allow: allowed.join(', ') });
    return true;
  }
  if (asset) {
    res.writeHead(200, {
      ...securityHeaders(PAGE_CSP),
      'content-type': asset.type,
      'content-length': String(Buffer.byteLength(asset.body)),
    });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
  } else if (pathname === `${INSPECTOR_PATH}events`) {
    if (!streamEvents(emulator, req, res, securityHeaders(DATA_CSP))) {
      sendError(res, 503, `Service Unavailable: ${MAX_EVENT_STREAMS} event streams are open already`, {
        'retry-after': '5',
      });
    }
  } else if (pathname === `${INSPECTOR_PATH}overview`) {
    sendJson(res, 200, inspectorOverview(emulator));
  } else if (pathname === `${INSPECTOR_PATH}record-page`) {
    recordPage(emulator, url, res);
  } else {
    download(emulator, url, res);
  }
  return true;
}
