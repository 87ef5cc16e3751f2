// Cloudflare Workers (workerd): one PushClient kept in module scope and used by every request, as
// Workers code often does. A fetch and a timer belong to the request that started them and stop
// once it has been answered, so nothing one request starts may be left for another to wait on.
import { PushClient } from 'push-api-client';

let client;

export default {
  async fetch(request) {
    const { settings, abortAfterMs } = await request.json();
    client ??= new PushClient({ ...settings, env: {} });
    const started = Date.now();
    try {
      const signal = abortAfterMs === undefined ? undefined : AbortSignal.timeout(abortAfterMs);
      const token = await client.tokens.getToken({ signal });
      return Response.json({ tokenType: token.tokenType, ms: Date.now() - started });
    } catch (error) {
      return Response.json({ error: error.name, ms: Date.now() - started });
    }
  },
};
