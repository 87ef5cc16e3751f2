// Node, Bun and Deno: the smoke flow with a file on disk, or the field flow (`"flow": "field"`).
// Settings come as one JSON argument.
import { fieldFlow } from './field.mjs';
import { smokeFlow } from './flow.mjs';

const { settings, diskFile, flow } = JSON.parse(globalThis.Deno ? Deno.args[0] : process.argv[2]);
console.log(JSON.stringify(flow === 'field' ? await fieldFlow(settings) : await smokeFlow(settings, diskFile)));
