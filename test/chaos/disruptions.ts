/**
 * Mid-run disruptions that are not per-request faults: every token expiring at once (the
 * emulator clock jumps past the short TTL), the current token revoked server-side, and every
 * signed upload address expiring between getUploadUrls and the PUTs.
 */
import type { ResponseHookEvent } from 'push-api-client';
import type { PushApiEmulator } from 'push-api-client/testing';

/** Settled batches without a new token before the next token disruption. */
const QUIET_BATCHES = 5;

/** Operations that carry the bearer token. */
const BEARER_OPERATIONS = new Set(['finance', 'upload-urls']);

export interface DisruptionCounts {
  tokenExpiries: number;
  tokenRevocations: number;
  signedUrlExpiries: number;
}

export class Disruptions {
  readonly counts: DisruptionCounts = { tokenExpiries: 0, tokenRevocations: 0, signedUrlExpiries: 0 };
  readonly #mock: PushApiEmulator;
  readonly #tokenTtlSeconds: number;
  readonly #done = new Set<string>();
  /** Token count seen at each settled batch, to find a quiet moment. */
  #tokenHistory: number[] = [];
  /**
   * Requests whose token was just refused and that have not been answered since: they are between
   * their refresh and its re-send, and a second refusal there is final by design. With up to 32
   * batches in flight, a few quiet settlements no longer mean that none is.
   */
  readonly #refreshing = new Set<number>();

  constructor(mock: PushApiEmulator, tokenTtlSeconds: number) {
    this.#mock = mock;
    this.#tokenTtlSeconds = tokenTtlSeconds;
    mock.setTokenTtl(tokenTtlSeconds);
  }

  /**
   * Called as finance batches settle: expire at 25% and 75%, revoke at 50%, each once, and each
   * only once no token was issued for the last few batches. A token revoked while requests are
   * re-sending with it right after their 401 refresh is refused a second time, and the SDK
   * rightly stops there (SECURITY.md); the chaos run tests recovery, not back-to-back revocations.
   */
  onPublishProgress(settled: number, total: number): void {
    if (total === 0) return;
    this.#tokenHistory.push(this.#mock.state.tokenRequestCount);
    if (this.#refreshing.size > 0) return;
    const recent = this.#tokenHistory.slice(-QUIET_BATCHES);
    if (recent.length < QUIET_BATCHES || recent[0] !== recent[recent.length - 1]) return;
    const share = settled / total;
    // At most one disruption per quiet spell: the next waits until no token was issued again.
    if (share >= 0.25 && this.#once('expire-1', () => this.expireTokens())) return;
    if (share >= 0.5 && this.#once('revoke', () => this.revokeCurrentToken())) return;
    if (share >= 0.75) this.#once('expire-2', () => this.expireTokens());
  }

  /** The client's `response` hook: which requests are in the middle of a token refresh. */
  onResponse(event: ResponseHookEvent): void {
    if (!BEARER_OPERATIONS.has(event.operation)) return;
    if (event.status === 401) this.#refreshing.add(event.callId);
    else this.#refreshing.delete(event.callId);
  }

  /** Called from the uploader's onProgress: the first bytes moving means the addresses were issued. */
  onUploadProgress(): void {
    this.#once('signed-urls', () => {
      this.#mock.expireSignedUrls();
      this.counts.signedUrlExpiries += 1;
    });
  }

  expireTokens(): void {
    this.#mock.advanceTime(this.#tokenTtlSeconds * 1000 + 1000);
    this.counts.tokenExpiries += 1;
  }

  revokeCurrentToken(): void {
    const now = this.#mock.now();
    const active = this.#mock.state.tokens.filter((token) => !token.revoked && token.expiresAt > now);
    const newest = active.sort((a, b) => b.issuedAt - a.issuedAt)[0];
    if (newest && this.#mock.revokeToken(newest.token)) this.counts.tokenRevocations += 1;
  }

  /** Runs `action` the first time `key` is seen; true when it ran. */
  #once(key: string, action: () => void): boolean {
    if (this.#done.has(key)) return false;
    this.#done.add(key);
    action();
    this.#tokenHistory = [];
    return true;
  }
}
