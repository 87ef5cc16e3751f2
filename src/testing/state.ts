/**
 * Everything the emulated service remembers, and the read-only views tests use to assert on it.
 */
import { type FinanceDelivery, type FinanceRecord, FinanceStore } from './finance-store.js';
import type { CredentialInput } from './options.js';

export type Operation = 'token' | 'upload-urls' | 'upload' | 'finance';

export interface TokenRecord {
  token: string;
  clientId: string;
  scopes: string[];
  /** Emulator clock (ms). */
  issuedAt: number;
  expiresAt: number;
  revoked: boolean;
}

/** A credential as tests may see it: the secret is never exposed by the state. */
export interface CredentialView {
  clientId: string;
  scopes: string[];
}

export interface RequestLogEntry {
  /** The `x-request-id` the emulator answered with. */
  id: string;
  /** Emulator clock (ms) when the request arrived. */
  at: number;
  method: string;
  /** Origin and path, without the query. */
  url: string;
  path: string;
  /** Query parameters; a signed URL's `signature` is redacted. */
  query: Record<string, string[]>;
  operation: Operation | undefined;
  /** The status answered; 0 when the connection was dropped. */
  status: number;
  /** Request headers (lower-case names), with `authorization` redacted to its scheme. */
  headers: Record<string, string>;
  /** Set when an injected fault decided the outcome. */
  fault?: 'status' | 'drop-before' | 'drop-after';
}

export interface StoredFile {
  appId: string;
  name: string;
  /** The `type` the upload address was issued for, when one was given. */
  type: string | undefined;
  bytes: Uint8Array;
  size: number;
  sha256: string;
  /** Quoted md5 hex, as object stores answer. */
  etag: string;
  contentType: string | undefined;
  /** The Authorization header sent with the PUT; a signed URL needs none. */
  authorization: string | undefined;
  uploadedAt: number;
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
  readonly requests: RequestLogEntry[] = [];
  tokenRequestCount = 0;
  readonly #maxRequestLog: number;

  constructor(maxRequestLog: number) {
    this.#maxRequestLog = maxRequestLog;
  }

  clear(credentials: CredentialInput[], apps: string[]): void {
    this.credentials.clear();
    for (const credential of credentials) this.credentials.set(credential.clientId, credential);
    this.apps.clear();
    for (const app of apps) this.apps.add(app);
    this.tokens.clear();
    this.finance.clear();
    this.files.clear();
    this.requests.length = 0;
    this.tokenRequestCount = 0;
  }

  log(entry: RequestLogEntry): void {
    this.requests.push(entry);
    // Dropping a chunk at a time keeps this amortised O(1) instead of shifting on every request.
    if (this.requests.length > this.#maxRequestLog * 1.1) {
      this.requests.splice(0, this.requests.length - this.#maxRequestLog);
    }
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
  /** The request id that delivered the record at `index` of `records(appId)`. */
  deliveryOf(appId: string, index: number): string | undefined;
  /** Files of one app, by name. */
  files(appId: string): StoredFile[];
  file(appId: string, name: string): StoredFile | undefined;
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
    deliveryOf(appId, index) {
      return state.finance.get(appId)?.deliveryOf(index);
    },
    files(appId) {
      return [...(state.files.get(appId)?.values() ?? [])];
    },
    file(appId, name) {
      return state.files.get(appId)?.get(name);
    },
  };
}
