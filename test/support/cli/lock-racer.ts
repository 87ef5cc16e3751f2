/**
 * One contender in the checkpoint lock race (run with tsx by checkpoint-lock.e2e.test.ts): takes
 * the lock, logs entering and leaving, then leaves the lock as a killed run would (naming a dead
 * process), so that the next winner must take it over from the stale holder.
 */
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireCheckpointLock } from '../../../src/cli/run-file-lock.js';

const [checkpoint, log, rounds, deadPid] = process.argv.slice(2) as [string, string, string, string];
const deadline = Date.now() + 20_000;
let wins = 0;
while (wins < Number(rounds) && Date.now() < deadline) {
  let lock: ReturnType<typeof acquireCheckpointLock>;
  try {
    lock = acquireCheckpointLock(checkpoint);
  } catch {
    await sleep(Math.random() * 3);
    continue;
  }
  appendFileSync(log, `enter ${process.pid}\n`);
  await sleep(2);
  appendFileSync(log, `exit ${process.pid}\n`);
  wins++;
  const stale = {
    pid: Number(deadPid),
    host: hostname(),
    since: new Date().toISOString(),
    token: `${process.pid}-${wins}`,
  };
  writeFileSync(`${lock.path}.${process.pid}`, JSON.stringify(stale));
  renameSync(`${lock.path}.${process.pid}`, lock.path);
  lock.release(); // no longer ours: left in place
}
appendFileSync(log, `done ${process.pid} ${wins}\n`);
if (wins < Number(rounds)) {
  // Out of time before winning every round: a slow machine, not two holders; say which.
  console.error(`lock-racer ${process.pid}: won ${wins} of ${rounds} rounds before its 20 s deadline`);
  process.exitCode = 1;
}
