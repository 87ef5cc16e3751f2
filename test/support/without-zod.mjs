/**
 * Preloaded with `node --import` into a test's child process: from then on, `zod` cannot be
 * loaded in that process. A resolve hook refuses the specifier, so a test can show that a code
 * path never loads zod (it would fail) without mocking any module of ours.
 */
import { register } from 'node:module';

const hooks = `
export async function resolve(specifier, context, next) {
  if (specifier === 'zod' || specifier.startsWith('zod/')) {
    const error = new Error('zod is blocked in this process (' + specifier + ')');
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
