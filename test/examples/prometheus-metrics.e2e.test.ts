import { describe, expect, it } from 'vitest';
import { main } from '../../examples/prometheus-metrics.js';

describe('examples/prometheus-metrics.ts', () => {
  it('counts attempts by operation and status, retries and token refreshes, in the text format', async () => {
    const text = await main();
    const samples = Object.fromEntries(
      text
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => {
          const at = line.lastIndexOf(' ');
          return [line.slice(0, at), Number(line.slice(at + 1))];
        }),
    );
    expect(samples).toMatchObject({
      'push_api_requests_total{operation="finance",status="200"}': 1,
      'push_api_requests_total{operation="finance",status="429"}': 1,
      'push_api_requests_total{operation="token",status="200"}': 1,
      'push_api_retries_total{operation="finance"}': 1,
      'push_api_request_duration_seconds_count{operation="finance"}': 2,
      'push_api_token_refreshes_total{reason="initial"}': 1,
    });
    expect(samples['push_api_request_duration_seconds_sum{operation="finance"}']).toBeGreaterThan(0);
    expect(text).toContain('# TYPE push_api_requests_total counter');
  });
});
