/** Module resolution hooks of import-probe.mjs (they run in the loader thread). */
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data;
}

export async function resolve(specifier, context, next) {
  if (file && specifier === 'undici') appendFileSync(file, `${specifier}\n`);
  return next(specifier, context);
}
