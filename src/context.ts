import type { SafeHooks } from './http/fetch.js';
import type { Logger } from './http/public-types.js';
import type { RetryTiming } from './http/retry.js';
import type { HttpClient } from './http/types.js';
import type { WindowMemory } from './run/engine.js';

/** What PushClient hands to each of its parts: shared transport and settings, resolved once. */
export interface ClientContext {
  http: HttpClient;
  /** The data API's base address, `{base_url}` in the spec. */
  baseUrl: URL;
  logger: Logger;
  /** `defaultHeaders`, checked, with lower-case names: for requests to the service, never to the storage host. */
  defaultHeaders: Readonly<Record<string, string>>;
  /** The user's hooks, guarded. */
  hooks: SafeHooks;
  /** Re-send finance batches whose outcome is unknown (may duplicate records). */
  retryAmbiguous: boolean;
  /** The client's `backoff` and `maxRetryAfterMs`, for the waits the publisher takes itself (429 patience). */
  retryTiming: RetryTiming;
  /** The client's `maxRetries`: with waits of 0, it also bounds 429 patience. */
  maxRetries: number;
  /** The client's `timeoutMs`: a publish's window grows only while its round trips stay well within it. */
  timeoutMs: number;
  /** Allow plain http to non-loopback hosts (signed upload addresses are checked too). */
  allowInsecureHttp: boolean;
  /** Where this client's last publish left its in-flight window, for the next one to start there. */
  windows: WindowMemory;
}
