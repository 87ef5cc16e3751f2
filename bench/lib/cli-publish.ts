/** The command line of `push-api finance publish` as the CSV benchmarks run it: the built CLI, JSON output. */
import { CLI_ENTRY } from './paths.js';

export function cliPublishArgs(csv: string, appId: string, concurrency: number): string[] {
  return [CLI_ENTRY, 'finance', 'publish', csv, '--app', appId, '--concurrency', String(concurrency), '--json'];
}
