import type { HttpClient, Logger } from './http/types.js';

/** What PushClient hands to each of its parts: shared transport and settings, resolved once. */
export interface ClientContext {
  http: HttpClient;
  /** The data API's base address, `{base_url}` in the spec. */
  baseUrl: URL;
  logger: Logger;
  /** Re-send finance batches whose outcome is unknown (may duplicate records). */
  retryAmbiguous: boolean;
  /** Allow plain http to non-loopback hosts (signed upload addresses are checked too). */
  allowInsecureHttp: boolean;
}
