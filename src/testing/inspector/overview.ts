/**
 * What the inspector page shows besides records: the latest requests, files, tokens and faults,
 * as one small JSON object sent over server-sent events whenever it changes. Bounded whatever the
 * emulator holds (the last requests and tokens only), and free of secrets: token values, client
 * secrets and request headers are left out.
 */
import { stateOf } from '../emulator-internals.js';
import type { PushApiEmulator } from '../handler.js';
import type { RequestLogEntry, TokenRecord } from '../state.js';

/** Requests and tokens the overview carries: the newest ones. */
const OVERVIEW_LIMITS = { requests: 100, tokens: 100, filesPerApp: 200 } as const;

export interface RequestSummary {
  id: string;
  at: number;
  method: string;
  path: string;
  operation: string | null;
  status: number;
  durationMs: number | null;
  fault: RequestLogEntry['fault'] | null;
}

export interface InspectorOverview {
  /** Emulator clock (ms). */
  now: number;
  apps: {
    appId: string;
    records: number;
    files: {
      name: string;
      size: number;
      sha256: string;
      type: string | null;
      uploadCount: number;
      bytesKept: boolean;
    }[];
  }[];
  tokens: { clientId: string; scopes: string[]; issuedAt: number; expiresAt: number; revoked: boolean }[];
  tokenCount: number;
  faults: {
    match: unknown;
    status: number | null;
    times: number | null;
    retryAfter: number | string | null;
    drop: string | null;
  }[];
  requests: { total: number; recent: RequestSummary[] };
}

function summarize(entry: RequestLogEntry): RequestSummary {
  return {
    id: entry.id,
    at: entry.at,
    method: entry.method,
    path: entry.path,
    operation: entry.operation ?? null,
    status: entry.status,
    durationMs: entry.durationMs ?? null,
    fault: entry.fault ?? null,
  };
}

/** The request log as held, oldest first: not copied, since it may hold 100,000 entries. */
function requestLog(emulator: PushApiEmulator): readonly RequestLogEntry[] {
  return stateOf(emulator)?.requests ?? emulator.state.requests;
}

/**
 * The newest `limit` tokens, newest first, and how many there are. Tokens are kept for the
 * emulator's life: copying them all on every change would make a long run's open inspector cost
 * the emulator most of its time.
 */
function newestTokens(emulator: PushApiEmulator, limit: number): { newest: TokenRecord[]; count: number } {
  const held = stateOf(emulator)?.tokens;
  if (!held) {
    const all = emulator.state.tokens;
    return { newest: all.slice(-limit).reverse(), count: all.length };
  }
  const newest: TokenRecord[] = [];
  let skip = held.size - limit;
  for (const token of held.values()) {
    if (skip > 0) skip -= 1;
    else newest.push(token);
  }
  return { newest: newest.reverse(), count: held.size };
}

export function inspectorOverview(emulator: PushApiEmulator): InspectorOverview {
  const { state } = emulator;
  const requests = requestLog(emulator);
  const tokens = newestTokens(emulator, OVERVIEW_LIMITS.tokens);
  return {
    now: emulator.now(),
    apps: state.apps.map((appId) => ({
      appId,
      records: state.recordCount(appId),
      files: state
        .files(appId)
        .slice(-OVERVIEW_LIMITS.filesPerApp)
        .map((file) => ({
          name: file.name,
          size: file.size,
          sha256: file.sha256,
          type: file.type ?? null,
          uploadCount: file.uploadCount,
          bytesKept: file.bytes !== undefined,
        })),
    })),
    // The token value is a bearer credential: only who holds it, what it grants and until when.
    tokens: tokens.newest.map(({ clientId, scopes, issuedAt, expiresAt, revoked }) => ({
      clientId,
      scopes: [...scopes],
      issuedAt,
      expiresAt,
      revoked,
    })),
    tokenCount: tokens.count,
    faults: emulator.faults.list().map((rule) => ({
      match: rule.match ?? null,
      status: rule.status ?? null,
      times: rule.times === Infinity ? null : (rule.times ?? null),
      retryAfter: rule.retryAfter ?? null,
      drop: rule.drop ?? null,
    })),
    requests: { total: requests.length, recent: requests.slice(-OVERVIEW_LIMITS.requests).reverse().map(summarize) },
  };
}

/**
 * Changes when anything the overview shows may have changed: a request (records, files and tokens
 * only change through requests), a fault added or used up, the clock moved, a reset.
 */
export function overviewVersion(emulator: PushApiEmulator): string {
  const requests = requestLog(emulator);
  const clockOffsetSeconds = Math.round((emulator.now() - Date.now()) / 1000);
  return `${requests.length}:${requests.at(-1)?.id ?? ''}:${emulator.faults.injected}:${emulator.faults.list().length}:${clockOffsetSeconds}`;
}
