// The field flow: what a runtime's fetch, AbortSignal and streams meet from a service that
// misbehaves. The driver arms the emulator's faults (FIELD_FAULTS) for one app, each runtime runs
// fieldFlow() against it, and the driver judges the outcome by the emulator's state and by what
// the flow saw (judgeField). Only web APIs here: it runs in workerd and edge-runtime too.
import { PublishStoppedError, PushClient, PushError } from 'push-api-client';
import { makeRecords, patternBytes } from './shared.mjs';

const PUBLISH = { records: 2500, batchSize: 250 };
const STOPPED = { records: 2000, batchSize: 100 };
const FILES = [
  { name: 'field-a.bin', size: 200_000, seed: 21 },
  { name: 'field-b.bin', size: 70_001, seed: 22 },
  { name: 'field-c.bin', size: 1, seed: 23 },
];
const TIMEOUT_MS = 3000;

/**
 * The faults, for the app `appId`, and what they must come to. Each finance fault is met by one
 * request (a request meets one fault at most), so however they fall on the batches: the 503 and
 * the 429 are re-sent and end `sent`; a connection dropped after the batch was stored, a 500 and
 * an answer slower than the timeout end `unknown`; a 400 ends `failed`. The storage host's 503 and
 * its connection dropped before the PUT, the address request's 503 and the token endpoint's 503
 * are all re-sent.
 */
export function fieldFaults(appId, clientSecret) {
  const finance = { operation: 'finance', pathIncludes: `/apps/${appId}/` };
  return [
    { match: { operation: 'token' }, status: 503 },
    { match: finance, status: 503 },
    { match: finance, status: 429, retryAfter: 1 },
    { match: finance, drop: 'after' },
    { match: finance, status: 500 },
    // A service that echoes the credential back in its error: the SDK must not repeat it.
    {
      match: finance,
      status: 400,
      body: { error: 'invalid_request', message: `client_secret=${clientSecret} refused` },
    },
    { match: finance, delayMs: 2 * TIMEOUT_MS },
    { match: { operation: 'upload-urls', pathIncludes: `/apps/${appId}/` }, status: 503 },
    { match: { operation: 'upload', pathIncludes: `/${appId}/` }, status: 503 },
    { match: { operation: 'upload', pathIncludes: `/${appId}/` }, drop: 'before' },
  ];
}

const EXPECTED_BATCHES = { sent: 6, unknown: 3, failed: 1 };

/** Runs in the runtime under test. Returns what it saw, as plain JSON. */
export async function fieldFlow(settings) {
  const client = new PushClient({ ...settings, env: {}, timeoutMs: TIMEOUT_MS, backoff: { initialDelayMs: 50 } });
  const seen = {};
  const texts = [];

  const published = await client.finance.publish(settings.appId, makeRecords(PUBLISH.records), {
    batchSize: PUBLISH.batchSize,
  });
  seen.publish = {
    sent: published.recordsSent,
    unknown: published.recordsUnknown,
    failed: published.recordsFailed,
    invalid: published.recordsInvalid,
    batches: { sent: published.batchesSent, unknown: published.batchesUnknown, failed: published.batchesFailed },
    errors: published.batches
      .filter((batch) => batch.error)
      .map((batch) => `${batch.error.name}: ${batch.error.message}`),
  };
  texts.push(JSON.stringify(published), ...published.batches.map((batch) => String(batch.error ?? '')));

  const files = FILES.map((file) => ({ name: file.name, data: patternBytes(file.size, file.seed) }));
  const uploaded = await client.uploads.upload(settings.appId, files);
  seen.upload = {
    uploaded: uploaded.filesUploaded,
    failed: uploaded.filesFailed,
    errors: uploaded.files.filter((file) => file.error).map((file) => file.error.message),
  };
  texts.push(JSON.stringify(uploaded));

  // The caller's abort once the first batch is settled: a typed stop with a report that accounts
  // for every record, in whatever realm the runtime gives errors.
  const controller = new AbortController();
  const stopped = await client.finance
    .publish(settings.appId, makeRecords(STOPPED.records), {
      batchSize: STOPPED.batchSize,
      concurrency: 2,
      signal: controller.signal,
      onBatchSettled: () => controller.abort(),
    })
    .then(
      () => undefined,
      (error) => error,
    );
  const report = stopped?.report;
  seen.stop = {
    typed: stopped instanceof PublishStoppedError && stopped instanceof PushError,
    cause: stopped?.cause?.name,
    sent: report?.recordsSent,
    unknown: report?.recordsUnknown,
    accounted: report
      ? report.recordsSent +
        report.recordsUnknown +
        report.recordsFailed +
        report.recordsInvalid +
        report.recordsNotRead
      : undefined,
  };
  texts.push(String(stopped), stopped?.message ?? '', JSON.stringify(stopped ?? null), JSON.stringify(report ?? null));

  const token = (await client.tokens.getToken()).accessToken;
  seen.tokenInText = texts.some((text) => text.includes(token));
  return seen;
}

/** The problems in a field run: `seen` from the runtime, `stored` the emulator's record count for the app. */
export function judgeField(seen, stored, clientSecret) {
  const problems = [];
  const publish = seen.publish;
  for (const [status, count] of Object.entries(EXPECTED_BATCHES)) {
    if (publish.batches[status] !== count) {
      problems.push(
        `field publish: ${publish.batches[status]} batches ${status}, not ${count} (${publish.errors.join('; ')})`,
      );
    }
  }
  if (publish.sent + publish.unknown + publish.failed + publish.invalid !== PUBLISH.records) {
    problems.push(
      `field publish: ${publish.sent}+${publish.unknown}+${publish.failed}+${publish.invalid} records accounted, not ${PUBLISH.records}`,
    );
  }
  if (seen.upload.uploaded !== FILES.length) {
    problems.push(
      `field upload: ${seen.upload.uploaded} of ${FILES.length} uploaded (${seen.upload.errors.join('; ')})`,
    );
  }
  if (!seen.stop.typed) problems.push(`field stop: not a PublishStoppedError (cause ${seen.stop.cause})`);
  if (seen.stop.cause !== 'AbortError') problems.push(`field stop: cause ${seen.stop.cause}, not AbortError`);
  if (seen.stop.accounted !== STOPPED.records) {
    problems.push(`field stop: ${seen.stop.accounted} records accounted, not ${STOPPED.records}`);
  }
  // Stored at least what was reported sent, and at most that plus what may have been.
  const least = publish.sent + (seen.stop.sent ?? 0);
  const most = least + publish.unknown + (seen.stop.unknown ?? 0);
  if (stored < least || stored > most) problems.push(`field: ${stored} records stored, outside ${least}..${most}`);
  if (seen.tokenInText) problems.push('field: the access token appears in a report or an error');
  if (JSON.stringify(seen).includes(clientSecret))
    problems.push('field: the client secret appears in a report or an error');
  return problems;
}

export const FIELD_FILES = FILES;
