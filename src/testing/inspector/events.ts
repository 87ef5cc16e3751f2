/**
 * The inspector's live feed: a server-sent event stream that sends the overview when it changes.
 * It polls a cheap version string rather than hooking the handler, so the emulator's request path
 * stays as it is; a few polls a second cost nothing next to what a page can display.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PushApiEmulator } from '../handler.js';
import { inspectorOverview, overviewVersion } from './overview.js';

const POLL_MS = 250;
/** A comment line now and then, so proxies and the browser see the stream is alive. */
const HEARTBEAT_MS = 15_000;

export function streamEvents(
  emulator: PushApiEmulator,
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
): void {
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
  });
  // The browser reconnects after this many ms when the stream breaks.
  res.write('retry: 1000\n\n');
  let sent: string | undefined;
  let sinceHeartbeat = 0;
  const tick = () => {
    const version = overviewVersion(emulator);
    if (version !== sent) {
      sent = version;
      sinceHeartbeat = 0;
      res.write(`event: overview\ndata: ${JSON.stringify(inspectorOverview(emulator))}\n\n`);
      return;
    }
    sinceHeartbeat += POLL_MS;
    if (sinceHeartbeat >= HEARTBEAT_MS) {
      sinceHeartbeat = 0;
      res.write(': alive\n\n');
    }
  };
  tick();
  const timer = setInterval(tick, POLL_MS);
  // An open stream must not keep a test's process alive once everything else is done.
  timer.unref();
  const stop = () => clearInterval(timer);
  req.once('close', stop);
  res.once('close', stop);
}
