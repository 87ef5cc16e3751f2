/** The SDK's window as the network rows record it, and the plot drawn from it. */
import { describe, expect, it } from 'vitest';
import { windowSvg } from '../../bench/lib/window-svg.js';
import { WindowRecorder, type WindowTrace } from '../../bench/lib/window-trace.js';

const info = (operation: string) => ({ callId: 1, operation, method: 'POST', url: 'http://127.0.0.1/x', attempt: 1 });
const answer = (operation: string) => ({
  ...info(operation),
  status: 200,
  durationMs: 1,
  requestId: undefined,
  error: undefined,
});

describe('the window recorder', () => {
  it("counts its operation's requests in flight from the request and response hooks", () => {
    const recorder = new WindowRecorder('finance');
    const hooks = recorder.hooks();
    recorder.start();
    hooks.request?.(info('finance'));
    hooks.request?.(info('token'));
    hooks.request?.(info('finance'));
    hooks.response?.(answer('finance'));
    const trace = recorder.trace();
    expect(trace.inFlight.map(([, n]) => n)).toEqual([0, 1, 2, 1]);
    expect(recorder.peakInFlight).toBe(2);
    expect(trace.limit).toEqual([]);
  });

  it('records the concurrency hook where the SDK has one, and skips events it cannot read', () => {
    const recorder = new WindowRecorder('finance');
    const hooks = recorder.hooks() as { concurrency?: (event: unknown) => void };
    recorder.start();
    hooks.concurrency?.({ operation: 'finance', limit: 8, previous: 4, inFlight: 4, reason: 'grow', rttMs: 51.234 });
    hooks.concurrency?.({ operation: 'upload', limit: 2, previous: 4, inFlight: 4, reason: 'latency' });
    hooks.concurrency?.({ operation: 'finance', limit: 'many' });
    hooks.concurrency?.(null);
    expect(recorder.limitEvents).toBe(1);
    expect(recorder.trace().limit).toEqual([{ tMs: expect.any(Number), limit: 8, reason: 'grow', rttMs: 51.2 }]);
  });

  it('starts each run afresh', () => {
    const recorder = new WindowRecorder('upload');
    const hooks = recorder.hooks();
    recorder.start();
    hooks.request?.(info('upload'));
    recorder.start();
    expect(recorder.trace().inFlight).toEqual([[0, 0]]);
    expect(recorder.peakInFlight).toBe(0);
  });
});

describe('the window plot', () => {
  const trace: WindowTrace = {
    operation: 'finance',
    durationMs: 3000,
    inFlight: [
      [0, 0],
      [10, 4],
      [1500, 16],
      [2900, 0],
    ],
    limit: [
      { tMs: 0, limit: 4, reason: 'start' },
      { tMs: 1000, limit: 16, reason: 'grow' },
    ],
  };

  it('draws both lines from the trace alone, the same every time', () => {
    const svg = windowSvg(trace, 'title <&>', 'subtitle');
    expect(svg).toBe(windowSvg(trace, 'title <&>', 'subtitle'));
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('title &#60;&#38;&#62;');
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg).toContain('window (concurrency hook)');
  });

  it('says so when the SDK reported no window', () => {
    const svg = windowSvg({ ...trace, limit: [] }, 't');
    expect(svg.match(/<path /g)).toHaveLength(1);
    expect(svg).toContain('no concurrency hook events');
  });
});
