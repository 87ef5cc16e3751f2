/** Messages between the harness and a server child (sink or emulator), over the fork IPC channel. */

export interface SinkStats {
  tokenRequests: number;
  financeRequests: number;
  /** Records counted in finance bodies; only when the sink was started with `countRecords`. */
  financeRecords: number;
  /** Finance requests answered 429 (emulator only). */
  financeRateLimited: number;
  /**
   * Emulator only: the finance requests, and those answered 429, that arrived after the first two
   * rate-limit windows of the run (from its first finance request): what a fleet settles to once
   * its first contact with the limit is over.
   */
  financeRequestsSettled: number;
  financeRateLimitedSettled: number;
  uploadUrlRequests: number;
  uploads: number;
  uploadBytes: number;
  /** PUTs refused: no Content-Length, or a body of another length. */
  uploadErrors: number;
  bodyBytes: number;
}

export interface ServerChildConfig {
  kind: 'sink' | 'emulator';
  /** Sink: parse each finance body and count its records (costs CPU in the sink process). */
  countRecords?: boolean;
  /**
   * Sink: how long the service takes to answer a finance batch, `baseMs + perRecordMs × records`,
   * as a real service spends it validating and storing; the sink's CPU stays idle meanwhile.
   */
  serverTime?: ServerTime;
  /** Emulator: its rate limit on the data API. */
  rateLimit?: { requests: number; windowMs: number };
}

export interface ServerTime {
  baseMs: number;
  perRecordMs: number;
}

export type ToChild = { type: 'stats' } | { type: 'reset' } | { type: 'close' };

export type FromChild =
  | { type: 'ready'; url: string; appId: string; clientId: string; clientSecret: string; scopeBase: string }
  | { type: 'stats'; stats: SinkStats }
  | { type: 'reset-done' };

export function emptyStats(): SinkStats {
  return {
    tokenRequests: 0,
    financeRequests: 0,
    financeRecords: 0,
    financeRateLimited: 0,
    financeRequestsSettled: 0,
    financeRateLimitedSettled: 0,
    uploadUrlRequests: 0,
    uploads: 0,
    uploadBytes: 0,
    uploadErrors: 0,
    bodyBytes: 0,
  };
}
