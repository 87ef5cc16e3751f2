/**
 * Preloaded with `node --import` in a child process: records in the file named by IMPORT_PROBE_FILE
 * each import of `undici`, so that a test can tell whether a run loaded it at all.
 */
import { register } from 'node:module';

register(new URL('./import-probe-hooks.mjs', import.meta.url), { data: process.env.IMPORT_PROBE_FILE });
