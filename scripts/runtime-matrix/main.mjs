// Node, Bun and Deno: the smoke flow with a file on disk. Settings come as one JSON argument.
import { smokeFlow } from './flow.mjs';

const { settings, diskFile } = JSON.parse(globalThis.Deno ? Deno.args[0] : process.argv[2]);
console.log(JSON.stringify(await smokeFlow(settings, diskFile)));
