// edge-runtime (Vercel's): the smoke and field flows, exposed for the driver to call inside the runtime.
import { fieldFlow } from './field.mjs';
import { smokeFlow } from './flow.mjs';

globalThis.runSmoke = (settings) => smokeFlow(settings, undefined).then((seen) => JSON.stringify(seen));
globalThis.runField = (settings) => fieldFlow(settings).then((seen) => JSON.stringify(seen));
