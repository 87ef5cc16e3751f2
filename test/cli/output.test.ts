/** Where the CLI's text goes: progress bars only for a terminal that can show them. */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../../src/cli/output.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A stream that says it is a terminal, as process.stderr does on one. */
function terminal(): PassThrough & { isTTY: boolean } {
  return Object.assign(new PassThrough(), { isTTY: true });
}

describe('progress bars', () => {
  it('are drawn on a terminal that can move its cursor', () => {
    vi.stubEnv('TERM', 'xterm-256color');
    expect(new Output({ json: false, verbose: false, stderr: terminal() }).interactive).toBe(true);
  });

  it('are not drawn on TERM=dumb (an editor shell, an IDE pane): the plain lines are printed instead', () => {
    vi.stubEnv('TERM', 'dumb');
    expect(new Output({ json: false, verbose: false, stderr: terminal() }).interactive).toBe(false);
  });

  it('are not drawn when stderr is not a terminal, or under --quiet', () => {
    vi.stubEnv('TERM', 'xterm-256color');
    expect(new Output({ json: false, verbose: false, stderr: new PassThrough() }).interactive).toBe(false);
    expect(new Output({ json: false, verbose: false, quiet: true, stderr: terminal() }).interactive).toBe(false);
  });
});
