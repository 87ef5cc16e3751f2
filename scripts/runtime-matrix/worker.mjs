// Cloudflare Workers (workerd, without nodejs_compat): the smoke or the field flow from a fetch handler.
import { fieldFlow } from './field.mjs';
import { smokeFlow } from './flow.mjs';

export default {
  async fetch(request) {
    const { settings, flow } = await request.json();
    return Response.json(flow === 'field' ? await fieldFlow(settings) : await smokeFlow(settings, undefined));
  },
};
