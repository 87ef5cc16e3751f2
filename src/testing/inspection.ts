/**
 * What the HTTP emulator tells an outside observer (a pipeline author's script, curl): a JSON
 * snapshot of what it received, the records as JSON Lines, and a short summary for the terminal.
 * Built from the public state view only, so secrets stay out as they do there: no client secrets,
 * no tokens, Authorization headers, URL signatures and secret query parameters redacted.
 */
import type { PushApiEmulator } from './handler.js';
import type { RequestLogEntry } from './state.js';

/** Path of the JSON snapshot on the HTTP emulator's origin. */
export const STATE_PATH = '/_emulator/state';
/** Path of the received records as JSON Lines. */
export const RECORDS_PATH = '/_emulator/records';
/** Request-log entries in a snapshot unless `?requests=N` asks for another number. */
export const DEFAULT_SNAPSHOT_REQUESTS = 1000;

/** One file in a snapshot: what was stored, without its bytes. */
export interface FileSnapshot {
  name: string;
  type: string | undefined;
  size: number;
  sha256: string;
  etag: string;
  uploadCount: number;
  /** Whether the emulator still holds the bytes (see `maxStoredUploadBytes`). */
  bytesKept: boolean;
}

/** The JSON answered by `GET /_emulator/state`. */
export interface EmulatorSnapshot {
  apps: { appId: string; records: number; deliveries: number; files: FileSnapshot[] }[];
  tokensIssued: number;
  uploadStorage: { storedBytes: number; maxStoredBytes: number; filesWithoutBytes: number };
  requests: {
    /** Requests in the retained log (the last `maxRequestLog`, within `maxRequestLogBytes`). */
    count: number;
    /** Of those, how many got each status (`"0"`: connection dropped by a fault). */
    byStatus: Record<string, number>;
    /** The last entries, oldest first. */
    log: RequestLogEntry[];
  };
}

function countByStatus(requests: readonly RequestLogEntry[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status } of requests) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

export function emulatorSnapshot(
  emulator: PushApiEmulator,
  requestLimit = DEFAULT_SNAPSHOT_REQUESTS,
): EmulatorSnapshot {
  const { state } = emulator;
  const requests = state.requests;
  return {
    apps: state.apps.map((appId) => ({
      appId,
      records: state.recordCount(appId),
      deliveries: state.deliveries(appId).length,
      files: state.files(appId).map((file) => ({
        name: file.name,
        type: file.type,
        size: file.size,
        sha256: file.sha256,
        etag: file.etag,
        uploadCount: file.uploadCount,
        bytesKept: file.bytes !== undefined,
      })),
    })),
    tokensIssued: state.tokens.length,
    uploadStorage: state.uploadStorage,
    requests: {
      count: requests.length,
      byStatus: countByStatus(requests),
      log: requestLimit > 0 ? requests.slice(-requestLimit) : [],
    },
  };
}

/** Text handed to the socket at a time while a snapshot is written. */
const SNAPSHOT_CHUNK_CHARS = 64 * 1024;

/**
 * The snapshot as `JSON.stringify(snapshot, null, 2)` writes it, and a line break, in pieces: the
 * request log can hold 100,000 entries and 128 MB, and one string of all of it (pretty-printed,
 * about twice that) would hold the process's memory, or pass V8's longest string, for one GET.
 */
export function* snapshotText(emulator: PushApiEmulator, requestLimit = DEFAULT_SNAPSHOT_REQUESTS): Generator<string> {
  const snapshot = emulatorSnapshot(emulator, requestLimit);
  const { log } = snapshot.requests;
  const outline = JSON.stringify({ ...snapshot, requests: { ...snapshot.requests, log: [] } }, null, 2);
  // The log is the outline's last value, and a quote inside a string is escaped: this is the one.
  const slot = outline.lastIndexOf(EMPTY_LOG);
  if (log.length === 0 || slot < 0) {
    yield `${outline}\n`;
    return;
  }
  let text = `${outline.slice(0, slot)}"log": [\n`;
  for (let i = 0; i < log.length; i++) {
    const entry = JSON.stringify(log[i], null, 2).replaceAll('\n', `\n${ENTRY_INDENT}`);
    text += `${ENTRY_INDENT}${entry}${i < log.length - 1 ? ',' : ''}\n`;
    if (text.length >= SNAPSHOT_CHUNK_CHARS) {
      yield text;
      text = '';
    }
  }
  yield `${text}${LOG_INDENT}]${outline.slice(slot + EMPTY_LOG.length)}\n`;
}

const EMPTY_LOG = '"log": []';
/** Where `JSON.stringify(…, null, 2)` puts `requests.log` (depth 2) and its entries (depth 3). */
const LOG_INDENT = ' '.repeat(4);
const ENTRY_INDENT = ' '.repeat(6);

/**
 * The received records as JSON Lines, app by app in arrival order: one
 * `{"appId":…,"requestId":…,"record":{…}}` per line, the request id being the `x-request-id` of the
 * request that delivered it (two lines with the same record and different request ids are a
 * duplicate delivery).
 */
export function* recordLines(emulator: PushApiEmulator): Generator<string> {
  for (const appId of emulator.state.apps) {
    for (const delivery of emulator.state.deliveries(appId)) {
      for (const record of delivery.records) {
        yield `${JSON.stringify({ appId, requestId: delivery.requestId, record })}\n`;
      }
    }
  }
}

/** A few lines for the terminal: records and files per app, requests by status. */
export function receivedSummary(emulator: PushApiEmulator): string {
  const { state } = emulator;
  const lines = ['received:'];
  for (const appId of state.apps) {
    const files = state.files(appId);
    const bytes = files.reduce((sum, file) => sum + file.size, 0);
    lines.push(
      `  ${appId}: ${plural(state.recordCount(appId), 'record')} in ${plural(state.deliveries(appId).length, 'request')}, ` +
        `${plural(files.length, 'file')} (${plural(bytes, 'byte')})`,
    );
  }
  const byStatus = Object.entries(countByStatus(state.requests))
    .map(([status, count]) => `${status === '0' ? 'dropped' : status} ×${count}`)
    .join(', ');
  lines.push(`requests: ${state.requests.length}${byStatus ? ` (${byStatus})` : ''}`);
  return `${lines.join('\n')}\n`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
