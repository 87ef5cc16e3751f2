/**
 * Loaded into a CLI process with `NODE_OPTIONS=--import <this file>` by the clock tests: the wall
 * clock (`Date.now()`, `new Date()`) steps by `CLOCK_STEP_MS` (negative: back) once
 * `CLOCK_STEP_AFTER_MS` of real time has passed, as NTP does to a machine whose clock drifted or a
 * VM resumed from a snapshot. The monotonic clock (`performance.now()`) goes on undisturbed.
 */
const realNow = Date.now.bind(Date);
const start = realNow();
const step = Number(process.env.CLOCK_STEP_MS ?? 0);
const after = Number(process.env.CLOCK_STEP_AFTER_MS ?? 0);
const wallClock = () => {
  const now = realNow();
  return now - start >= after ? now + step : now;
};

const RealDate = Date;
globalThis.Date = class SteppedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(wallClock());
    else super(...args);
  }

  static now() {
    return wallClock();
  }
};
