// edge-runtime (Vercel's): the smoke flow, exposed for the driver to call inside the runtime.
import { smokeFlow } from './flow.mjs';

globalThis.runSmoke = (settings) => smokeFlow(settings, undefined).then((seen) => JSON.stringify(seen));
