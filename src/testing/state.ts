/**
 * Everything the emulated service remembers, and the read-only views tests use to assert on it.
 */
import { BoundedRequestLog } from './bounded-request-log.js';
import { type FinanceDelivery, type FinanceRecord, FinanceStore } from './finance-store.js';
import type { CredentialInput } from './options.js';
import { type RecordPage, type RecordPageQuery, recordPage } from './record-page.js';
import { UploadBudget } from './upload-budget.js';

/**
 * The spec's operations, by which faults are matched and requests are logged: `token` (get an
 * access token), `upload-urls` (get signed addresses), `upload` (PUT to a signed address) and
 * `finance` (publish records).
 */
export type Operation = 'token' | 'upload-urls' | 'upload' | 'finance';

/** An access token the emulator issued, for asserting on what a client obtained. */
export interface TokenRecord {
  /** The access token itself. */
  token: string;
  /** The credential it was issued to. */
  clientId: string;
  /** Full scope names it grants. */
  scopes: string[];
  /** Emulator clock (ms). */
  issuedAt: number;
  /** Emulator clock (ms); the token is refused from this moment on. */
  expiresAt: number;
  /** Set by `revokeToken` or `revokeAllTokens`. */
  revoked: boolean;
}

/** A credential as tests may see it: the secret is never exposed by the state. */
export interface CredentialView {
  clientId: string;
  scopes: string[];
}

/**
 * One request the emulator answered, in `state.requests`: for asserting on what a client sent and
 * how often (retries, token requests, which attempt a fault hit).
 */
export interface RequestLogEntry {
  /** The `x-request-id` the emulator answered with. */
  id: string;
  /** Emulator clock (ms) when the request arrived. */
  at: number;
  /** HTTP method, as sent. */
  method: string;
  /** Origin and path, without the query. */
  url: string;
  /** Path only. */
  path: string;
  /** Query parameters; a signed URL's `signature` is redacted. */
  query: Record<string, string[]>;
  /** The operation the path belongs to; undefined for a path the service does not have. */
  operation: Operation | undefined;
  /** The status answered; 0 when the connection was dropped. */
  status: number;
  /** Request headers (lower-case names), with `authorization` redacted to its scheme. */
  headers: Record<string, string>;
  /** Set when an injected fault decided the outcome. */
  fault?: 'status' | 'drop-before' | 'drop-after';
  /** Real time (ms) the emulator took to answer, up to its response headers. */
  durationMs?: number;
  /**
   * Set when the request was bigger than one entry keeps (`LOG_ENTRY_LIMITS`: a flood of large
   * requests must not exhaust the emulator's memory). A path, header or query value past its limit
   * ends with `…[cut N chars]`; headers and query values past the limits are left out and counted.
   */
  truncated?: { headersLeftOut: number; queryValuesLeftOut: number };
}

/** A file the emulator's storage host received through a signed address. */
export interface StoredFile {
  /** The app whose upload address was used. */
  appId: string;
  /** The file name the address was issued for. */
  name: string;
  /** The `type` the upload address was issued for, when one was given. */
  type: string | undefined;
  /**
   * The content of the last PUT, byte for byte; undefined when keeping it would have passed the
   * emulator's `maxStoredUploadBytes` (its size and SHA-256 are kept all the same).
   */
  bytes: Uint8Array | undefined;
  /** Length of the content of the last PUT, in bytes. */
  size: number;
  /** Hex SHA-256 of the content, computed while it streamed: compares files whatever their size. */
  sha256: string;
  /** Quoted md5 hex, as object stores answer. */
  etag: string;
  /** The Content-Type header sent with the PUT, if any. */
  contentType: string | undefined;
  /** The Authorization header sent with the PUT; a signed URL needs none. */
  authorization: string | undefined;
  /** Emulator clock (ms) of the last PUT. */
  uploadedAt: number;
  /** The `x-request-id` of the last PUT. */
  requestId: string;
  /** How many PUTs stored this name (each overwrites the previous bytes). */
  uploadCount: number;
}

/** Mutable state. Handlers write it; tests read it through {@link EmulatorStateView}. */
export class EmulatorState {
  readonly credentials = new Map<string, CredentialInput>();
  readonly apps = new Set<string>();
  readonly tokens = new Map<string, TokenRecord>();
  readonly finance = new Map<string, FinanceStore>();
  readonly files = new Map<string, Map<string, StoredFile>>();
  readonly requestLog: BoundedRequestLog;
  tokenRequestCount = 0;
  readonly #maxStoredUploadBytes: number;
  #uploadBudget: UploadBudget;
  /**
   * Counts the times what was received was forgotten. A request carries the generation it arrived
   * in, and stores nothing once it has moved on: a reset between its arrival and its end (a body
   * still streaming, a fault's delay) must not leave its record, file, token or log entry in the
   * state the reset started.
   */
  #generation = 0;

  constructor(limits: { maxRequestLog: number; maxRequestLogBytes: number; maxStoredUploadBytes: number }) {
    this.requestLog = new BoundedRequestLog(limits.maxRequestLog, limits.maxRequestLogBytes);
    this.#maxStoredUploadBytes = limits.maxStoredUploadBytes;
    this.#uploadBudget = new UploadBudget(limits.maxStoredUploadBytes);
  }

  /** The uploaded bytes held now. A reset starts a new budget: PUTs in flight keep charging the old one. */
  get uploadBudget(): UploadBudget {
    return this.#uploadBudget;
  }

  /** The generation a request arriving now belongs to (see {@link isCurrent}). */
  get generation(): number {
    return this.#generation;
  }

  /** Whether a request that arrived in `generation` may still change the state: no reset since. */
  isCurrent(generation: number): boolean {
    return generation === this.#generation;
  }

  /** The request log, oldest first. */
  get requests(): readonly RequestLogEntry[] {
    return this.requestLog.entries;
  }

  clear(credentials: CredentialInput[], apps: string[]): void {
    this.credentials.clear();
    for (const credential of credentials) this.credentials.set(credential.clientId, credential);
    this.apps.clear();
    for (const app of apps) this.apps.add(app);
    this.clearReceived();
  }

  /** Forgets what was received (tokens, records, files, the request log); keeps apps and credentials. */
  clearReceived(): void {
    this.#generation += 1;
    this.tokens.clear();
    this.finance.clear();
    this.files.clear();
    this.#uploadBudget = new UploadBudget(this.#maxStoredUploadBytes);
    this.requestLog.clear();
    this.tokenRequestCount = 0;
  }

  log(entry: RequestLogEntry): void {
    this.requestLog.add(entry);
  }

  /** Gives a replaced file's bytes back to the upload budget. */
  forgetFileBytes(file: StoredFile): void {
    if (file.bytes) this.uploadBudget.release(file.size);
    else this.uploadBudget.countFileWithoutBytes(-1);
  }

  financeOf(appId: string): FinanceStore {
    let store = this.finance.get(appId);
    if (!store) {
      store = new FinanceStore();
      this.finance.set(appId, store);
    }
    return store;
  }

  filesOf(appId: string): Map<string, StoredFile> {
    let files = this.files.get(appId);
    if (!files) {
      files = new Map();
      this.files.set(appId, files);
    }
    return files;
  }
}

/** How much uploaded content the emulator holds in memory (see `maxStoredUploadBytes`). */
export interface UploadStorageView {
  /** Bytes of file content held now, across every app. */
  storedBytes: number;
  /** The limit: past it, files keep their size and SHA-256 but not their bytes. */
  maxStoredBytes: number;
  /** Files stored without their bytes, because they did not fit under the limit. */
  filesWithoutBytes: number;
}

/** What a test can read. Each getter returns a fresh snapshot array. */
export interface EmulatorStateView {
  readonly apps: string[];
  readonly credentials: CredentialView[];
  readonly tokens: TokenRecord[];
  readonly requests: RequestLogEntry[];
  readonly tokenRequestCount: number;
  /** Records of one app in arrival order (every app's, app by app, when omitted). */
  records(appId?: string): FinanceRecord[];
  /** How many records an app holds; O(1), also with `keepRecords: false`. */
  recordCount(appId?: string): number;
  /** Each accepted finance request of an app, with its request id and records. */
  deliveries(appId: string): FinanceDelivery[];
  /**
   * One page of an app's records, newest first, optionally filtered by a search over
   * `transactionNumber`, `vendor` and `identifier`; parses only the batches it reads, so it stays
   * fast with a million records. A search is a scan bounded by `limit` and `timeBudgetMs`.
   */
  recordPage(appId: string, query?: RecordPageQuery): RecordPage;
  /** The request id that delivered the record at `index` of `records(appId)`. */
  deliveryOf(appId: string, index: number): string | undefined;
  /** Files of one app, by name. */
  files(appId: string): StoredFile[];
  /** One file of an app, or undefined when nothing was stored under that name. */
  file(appId: string, name: string): StoredFile | undefined;
  /** How much uploaded content is held in memory, and how many files were kept without it. */
  readonly uploadStorage: UploadStorageView;
}

export function createStateView(state: EmulatorState): EmulatorStateView {
  return {
    get apps() {
      return [...state.apps];
    },
    get credentials() {
      return [...state.credentials.values()].map(({ clientId, scopes }) => ({ clientId, scopes: [...scopes] }));
    },
    get tokens() {
      return [...state.tokens.values()].map((token) => ({ ...token, scopes: [...token.scopes] }));
    },
    get requests() {
      return [...state.requests];
    },
    get tokenRequestCount() {
      return state.tokenRequestCount;
    },
    records(appId) {
      if (appId !== undefined) return [...(state.finance.get(appId)?.records() ?? [])];
      return [...state.finance.values()].flatMap((store) => store.records());
    },
    recordCount(appId) {
      if (appId !== undefined) return state.finance.get(appId)?.count ?? 0;
      let total = 0;
      for (const store of state.finance.values()) total += store.count;
      return total;
    },
    deliveries(appId) {
      return state.finance.get(appId)?.deliveries() ?? [];
    },
    recordPage(appId, query) {
      return recordPage(state.finance.get(appId), query);
    },
    deliveryOf(appId, index) {
      return state.finance.get(appId)?.deliveryOf(index);
    },
    files(appId) {
      return [...(state.files.get(appId)?.values() ?? [])];
    },
    file(appId, name) {
      return state.files.get(appId)?.get(name);
    },
    get uploadStorage() {
      const budget = state.uploadBudget;
      return {
        storedBytes: budget.heldBytes,
        maxStoredBytes: budget.maxBytes,
        filesWithoutBytes: budget.filesWithoutBytes,
      };
    },
  };
}
