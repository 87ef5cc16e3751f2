/**
 * One chaos seed over real HTTP: an emulator on 127.0.0.1 with the seed's faults, a client with a
 * short timeout, 100,000 records published while 50 files upload, tokens expiring and revoked
 * mid-run and signed addresses expiring before their PUT. Returns what happened and every
 * violated invariant, including any secret found in the run's logs, errors and reports.
 */
import { inspect } from 'node:util';
import { type BatchStatus, type PublishReport, PushClient, type UploadReport } from 'push-api-client';
import { DEMO_SCOPE_BASE, SCOPE_NAMES, seededRandom, startEmulator } from 'push-api-client/testing';
import { findSecrets, secretForms } from '../security/scan.js';
import { type DisruptionCounts, Disruptions } from './disruptions.js';
import { type FaultCounts, installFaults } from './fault-plan.js';
import { checkInvariants, type RecordBuckets } from './invariants.js';
import { buildWorkload, type WorkloadSize } from './workload.js';

export interface SeedOptions {
  seed: number;
  size: WorkloadSize;
  retryAmbiguous: boolean;
  /** Per-attempt client timeout; slow faults answer 500 ms after it. @default 1500 */
  timeoutMs?: number;
  /** Receives every captured log line, for investigating a failed seed. */
  onLog?: (line: string) => void;
}

export interface SeedResult {
  seed: number;
  retryAmbiguous: boolean;
  faultRate: number;
  faults: FaultCounts;
  disruptions: DisruptionCounts;
  buckets: RecordBuckets;
  batches: Record<BatchStatus, number>;
  filesUploaded: number;
  filesFailed: number;
  duplicates: number;
  tokenRequests: number;
  tokenBound: number;
  durationMs: number;
  violations: string[];
}

const TOKEN_TTL_SECONDS = 60;
const APP_ID = 'chaos-app';

/** Initial token, one per forced expiry or revocation, one per token fault, natural refreshes, and slack of 2. */
function tokenRequestBound(d: DisruptionCounts, tokenFaults: number, durationMs: number): number {
  const natural = Math.ceil(durationMs / (TOKEN_TTL_SECONDS * 900));
  return 1 + d.tokenExpiries + d.tokenRevocations + tokenFaults + natural + 2;
}

export async function runSeed(options: SeedOptions): Promise<SeedResult> {
  const { seed, retryAmbiguous } = options;
  const timeoutMs = options.timeoutMs ?? 1500;
  const random = seededRandom(seed);
  const clientId = `chaos-client-${seed}`;
  const clientSecret = `chaos-secret-${seed}-${Math.floor(random() * 2 ** 52).toString(36)}-do-not-log`;
  const workload = buildWorkload(seed, options.size);
  const emulator = await startEmulator({
    credentials: [{ clientId, clientSecret, scopes: SCOPE_NAMES.map((name) => `${DEMO_SCOPE_BASE}/${name}`) }],
    apps: [APP_ID],
  });
  const captured: string[] = [];
  const started = performance.now();
  try {
    const { mock } = emulator;
    const plan = installFaults(mock, random, { rate: 0.1 + 0.2 * random(), slowMs: timeoutMs + 500 });
    const disruptions = new Disruptions(mock, TOKEN_TTL_SECONDS);
    const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
      void captured.push(`${level} ${message} ${inspect(fields, { depth: 6, breakLength: Infinity })}`);
    const client = new PushClient({
      clientId,
      clientSecret,
      authUrl: emulator.authUrl,
      baseUrl: emulator.baseUrl,
      scopeBase: DEMO_SCOPE_BASE,
      timeoutMs,
      maxRetries: 4,
      retryAmbiguous,
      logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
      hooks: { response: (event) => disruptions.onResponse(event) },
      env: {},
    });
    const statusOf = new Map<number, BatchStatus>();
    const batchCount = Math.ceil(workload.records.length / options.size.batchSize);
    let settledBatches = 0;
    const publishing = client.finance.publish(APP_ID, workload.records, {
      onInvalid: 'skip',
      batchSize: options.size.batchSize,
      onBatchSettled(batch) {
        for (const index of batch.indexes) statusOf.set(index, batch.status);
        settledBatches += 1;
        disruptions.onPublishProgress(settledBatches, batchCount);
      },
    });
    const uploading = client.uploads.upload(
      APP_ID,
      workload.files.map(({ name, data }) => ({ name, data })),
      { onProgress: () => disruptions.onUploadProgress() },
    );
    // A run stopped by an error rejects with it; its report is judged like any other (`stoppedBy` is a violation).
    const reportOf = <T>(error: unknown): T => {
      const report = (error as { report?: T }).report;
      if (report === undefined) throw error;
      return report;
    };
    const [report, uploads] = await Promise.all([
      publishing.catch((error: unknown) => reportOf<PublishReport>(error)),
      uploading.catch((error: unknown) => reportOf<UploadReport>(error)),
    ]);
    const durationMs = Math.round(performance.now() - started);
    const faults = plan.counts();
    const tokenBound = tokenRequestBound(disruptions.counts, faults.token, durationMs);
    const checked = checkInvariants({
      workload,
      report,
      statusOf,
      uploads,
      state: mock.state,
      appId: APP_ID,
      retryAmbiguous,
      tokenBound,
    });

    if (options.onLog) for (const line of captured) options.onLog(line);
    for (const batch of report.batches) if (batch.error) captured.push(inspect(batch.error, { depth: 6 }));
    for (const file of uploads.files) if (file.error) captured.push(inspect(file.error, { depth: 6 }));
    captured.push(
      JSON.stringify(report),
      JSON.stringify(uploads),
      inspect(client, { depth: 6 }),
      JSON.stringify(client),
    );
    const secrets = [...secretForms(clientId, clientSecret), ...mock.state.tokens.map((token) => token.token)];
    const leaks = findSecrets(captured, secrets);
    const violations = [...checked.violations, ...leaks.map((leak) => `secret in output: ${leak}`)];
    if (captured.length < batchCount) violations.push('scan: fewer captured lines than batches, logging is off');

    const batches: Record<BatchStatus, number> = { sent: 0, failed: 0, unknown: 0 };
    for (const batch of report.batches) batches[batch.status] += 1;
    return {
      seed,
      retryAmbiguous,
      faultRate: plan.rate,
      faults,
      disruptions: disruptions.counts,
      buckets: checked.buckets,
      batches,
      filesUploaded: uploads.filesUploaded,
      filesFailed: uploads.filesFailed,
      duplicates: checked.duplicates,
      tokenRequests: mock.state.tokenRequestCount,
      tokenBound,
      durationMs,
      violations,
    };
  } finally {
    await emulator.close();
  }
}
