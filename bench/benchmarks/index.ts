import { checkpointFsync } from './checkpoint-fsync.js';
import { fleet } from './fleet.js';
import { longLived } from './long-lived.js';
import { network } from './network.js';
import { oneShot } from './one-shot.js';
import { publishThroughput } from './publish-throughput.js';
import { rateLimited } from './rate-limited.js';
import { realExports } from './real-exports.js';
import { streamingMemory } from './streaming-memory.js';
import { tokenSingleFlight } from './token-single-flight.js';
import type { Benchmark } from './types.js';
import { upload } from './upload.js';

/** Every benchmark, in the order the results table lists them. */
export const BENCHMARKS: readonly Benchmark[] = [
  publishThroughput,
  streamingMemory,
  upload,
  rateLimited,
  tokenSingleFlight,
  oneShot,
  fleet,
  longLived,
  checkpointFsync,
  realExports,
  network,
];
