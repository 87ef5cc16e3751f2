import type { Clock } from './clock.js';
import type { ResolvedOptions } from './options.js';
import type { UrlSigner } from './signed-url.js';
import type { EmulatorState } from './state.js';

/** What every operation handler shares: settings (some changeable at run time), state, clock, signer. */
export interface EmulatorContext {
  readonly config: ResolvedOptions;
  readonly state: EmulatorState;
  readonly clock: Clock;
  readonly signer: UrlSigner;
}

/**
 * Facts only the socket knows. The Request API drops `Content-Length` from bodies whose length
 * fetch computes itself, so only the HTTP adapter can say for sure whether the client sent one.
 */
export interface WireInfo {
  contentLength: string | undefined;
  transferEncoding: string | undefined;
}

/** One incoming request, as the operation handlers see it. */
export interface IncomingRequest {
  request: Request;
  url: URL;
  requestId: string;
  wire: WireInfo | undefined;
  /** The state's generation when it arrived: it may store only while that is current. */
  generation: number;
}
