/**
 * Recipe: Prometheus-style metrics from the client's hooks, with no metrics library.
 *
 * - `push_api_requests_total{operation,status}`: attempts, by operation and status (`error` when
 *   no answer came);
 * - `push_api_retries_total{operation}`: re-sends;
 * - `push_api_request_duration_seconds_sum` / `_count{operation}`: time spent per attempt;
 * - `push_api_token_refreshes_total{reason}`.
 *
 * `render()` writes the text exposition format a `/metrics` endpoint serves. With prom-client,
 * the same four hooks would call `counter.inc(labels)` instead.
 *
 *   npx tsx examples/prometheus-metrics.ts
 */
import { pathToFileURL } from 'node:url';
import { PushClient, type PushClientHooks } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';

type Labels = Record<string, string>;

/** Counters keyed by metric name and label set. */
class Counters {
  readonly #values = new Map<string, Map<string, number>>();

  add(name: string, labels: Labels, value = 1): void {
    let series = this.#values.get(name);
    if (!series) {
      series = new Map();
      this.#values.set(name, series);
    }
    const key = Object.entries(labels)
      .map(([label, text]) => `${label}="${text.replace(/["\\\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}"`)
      .join(',');
    series.set(key, (series.get(key) ?? 0) + value);
  }

  render(help: Record<string, string>): string {
    const lines: string[] = [];
    for (const [name, series] of [...this.#values].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`# HELP ${name} ${help[name] ?? name}`, `# TYPE ${name} counter`);
      for (const [labels, value] of [...series].sort(([a], [b]) => a.localeCompare(b))) {
        lines.push(`${name}{${labels}} ${value}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
}

const HELP: Record<string, string> = {
  push_api_requests_total: 'HTTP attempts made by push-api-client, by operation and status.',
  push_api_retries_total: 'Attempts sent again after a retryable failure.',
  push_api_request_duration_seconds_sum: 'Total time spent in attempts, in seconds.',
  push_api_request_duration_seconds_count: 'Attempts timed.',
  push_api_token_refreshes_total: 'Access tokens requested from the token endpoint, by reason.',
};

export interface Metrics {
  /** Pass these to `new PushClient({ hooks })`. */
  hooks: PushClientHooks;
  /** The metrics in Prometheus' text exposition format. */
  render(): string;
}

export function createMetrics(): Metrics {
  const counters = new Counters();
  const hooks: PushClientHooks = {
    response(event) {
      const status = event.status === undefined ? 'error' : String(event.status);
      counters.add('push_api_requests_total', { operation: event.operation, status });
      counters.add('push_api_request_duration_seconds_sum', { operation: event.operation }, event.durationMs / 1000);
      counters.add('push_api_request_duration_seconds_count', { operation: event.operation });
    },
    retry(event) {
      counters.add('push_api_retries_total', { operation: event.operation });
    },
    tokenRefresh(event) {
      counters.add('push_api_token_refreshes_total', { reason: event.reason });
    },
  };
  return { hooks, render: () => counters.render(HELP) };
}

export async function main(): Promise<string> {
  const metrics = createMetrics();
  const emulator = await startEmulator();
  try {
    const client = new PushClient({
      clientId: emulator.mock.clientId,
      clientSecret: emulator.mock.clientSecret,
      authUrl: emulator.authUrl,
      baseUrl: emulator.baseUrl,
      scopeBase: emulator.mock.scopeBase,
      hooks: metrics.hooks,
    });
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0, times: 1 });
    const record = {
      created: '2025-01-31',
      amount: 42,
      currency: 'USD',
      identifier: 'ada@example.com',
      type: 'expense',
      vendor: 'Acme',
    } as const;
    await client.finance.publish(emulator.mock.appId, [record]);
  } finally {
    await emulator.close();
  }
  return metrics.render();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (text) => process.stdout.write(text),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
