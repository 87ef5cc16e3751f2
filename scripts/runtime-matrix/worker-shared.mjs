// Cloudflare Workers (workerd): one PushClient kept in module scope and used by every request, as
// Workers code often does. A fetch and a timer belong to the request that started them and stop
// once it has been answered, so nothing one request starts may be left for another to wait on.
import { PushClient } from 'push-api-client';

/** One client per scenario, so that each starts without a token. */
const clients = new Map();

export default {
  async fetch(request) {
    const { settings, scenario, abortAfterMs, stopWaitingAfterMs } = await request.json();
    let client = clients.get(scenario);
    if (client === undefined) {
      client = new PushClient({ ...settings, env: {} });
      clients.set(scenario, client);
    }
    const started = Date.now();
    try {
      const signal = abortAfterMs === undefined ? undefined : AbortSignal.timeout(abortAfterMs);
      const asked = client.tokens.getToken({ signal });
      // A handler that stops waiting on a timer of its own tells the client nothing: its request is
      // answered, and the refresh it started stops with it.
      const token =
        stopWaitingAfterMs === undefined
          ? await asked
          : await Promise.race([asked, new Promise((resolve) => setTimeout(resolve, stopWaitingAfterMs))]);
      if (token === undefined) return Response.json({ error: 'StoppedWaiting', ms: Date.now() - started });
      return Response.json({ tokenType: token.tokenType, ms: Date.now() - started });
    } catch (error) {
      return Response.json({ error: error.name, ms: Date.now() - started });
    }
  },
};
