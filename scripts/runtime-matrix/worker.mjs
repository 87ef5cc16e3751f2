// Cloudflare Workers (workerd, without nodejs_compat): the smoke flow from a fetch handler.
import { smokeFlow } from './flow.mjs';

export default {
  async fetch(request) {
    const { settings } = await request.json();
    return Response.json(await smokeFlow(settings, undefined));
  },
};
