/**
 * Local wall-clock times in an IANA time zone (or at a fixed offset), turned into instants. Offsets come from the
 * platform's time-zone data through `Intl.DateTimeFormat`, never from a table of our own, so
 * daylight-saving rules stay as current as the Node.js that runs the CLI.
 */

const DAY_MS = 86_400_000;

/**
 * Names of UTC, matched without Intl: creating the first `Intl.DateTimeFormat` with a time zone
 * loads the ICU time-zone data, several megabytes of memory that a run in UTC has no use for.
 */
const UTC_NAMES = new Set(['utc', 'etc/utc', 'gmt', 'etc/gmt', 'etc/universal', 'universal', 'zulu', 'etc/zulu']);

/** A fixed offset from UTC as ISO 8601 writes it: `+01:00`, `-0530`, `+09`. */
const FIXED_OFFSET = /^([+-])(\d{2})(?::?(\d{2}))?$/;
/** The largest offset in use anywhere (Kiribati's +14:00). */
const MAX_OFFSET_MINUTES = 14 * 60;

/**
 * The offset of a fixed-offset zone in milliseconds, positive east of Greenwich; undefined for a
 * zone name. Exports from systems that store local times with one offset write it this way, and
 * `Etc/GMT-1` (which IANA signs the other way round) is a trap to ask of anyone.
 */
function fixedOffsetMs(zone: string): number | undefined {
  const match = FIXED_OFFSET.exec(zone.trim());
  if (match === null) return undefined;
  const [, sign, hours, minutes = '00'] = match;
  const total = Number(hours) * 60 + Number(minutes);
  if (Number(minutes) > 59 || total > MAX_OFFSET_MINUTES) return undefined;
  return (sign === '-' ? -total : total) * 60_000;
}

/** Whether `zone` names a time zone this Node.js knows (`Europe/Berlin`, `UTC`), or is a fixed offset (`+01:00`). */
export function isKnownTimeZone(zone: string): boolean {
  if (UTC_NAMES.has(zone.toLowerCase())) return true;
  // Decided here, not by Intl: newer ICU versions take offsets up to ±23:59, and the same option
  // must mean the same on every Node.js.
  if (/^\s*[+-]/.test(zone)) return fixedOffsetMs(zone) !== undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Unix milliseconds of a wall-clock time read as UTC. `Date.UTC` maps the years 0-99 to 1900-1999;
 * a date written as `0075` must stay in the year 75.
 */
export function utcWallClock(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  if (y >= 100) return Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms));
  date.setUTCFullYear(y);
  return date.getTime();
}

/** Whether the zone is UTC under another name: no offsets to look up, ever. */
function isUtc(zone: string): boolean {
  if (UTC_NAMES.has(zone.toLowerCase())) return true;
  const canonical = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  return canonical === 'UTC' || canonical === 'Etc/UTC' || canonical === 'Etc/GMT' || canonical === 'GMT';
}

/** Turns the fields of a local time into Unix milliseconds; the fields are already range-checked. */
export type LocalTimeResolver = (
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millisecond: number,
) => number;

const HOUR_MS = 3_600_000;
/** Offsets kept, by UTC hour: a year of hourly times is 8,760 of them. */
const MAX_CACHED_HOURS = 20_000;

/**
 * A resolver for local times in `zone`. A time that does not exist (skipped by a daylight-saving
 * change) moves forward by the length of the gap, and a time that exists twice (the clocks went
 * back) is the earlier of the two instants: what Temporal calls `disambiguation: 'compatible'`,
 * and what `new Date(y, m, d, h)` does in a local zone.
 */
export function localTimeResolver(zone: string): LocalTimeResolver {
  const fixed = fixedOffsetMs(zone);
  if (fixed !== undefined) return (y, mo, d, h, mi, s, ms) => utcWallClock(y, mo, d, h, mi, s, ms) - fixed;
  if (isUtc(zone)) return utcWallClock;
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const cache = new Map<number, number>();

  /** The zone's offset from UTC at `instant` (whole seconds), in milliseconds, positive east of Greenwich. */
  const exactOffset = (instant: number): number => {
    const second = Math.floor(instant / 1000) * 1000;
    const fields = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
    for (const part of format.formatToParts(second)) {
      if (part.type in fields) fields[part.type as keyof typeof fields] = Number(part.value);
    }
    return Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second) - second;
  };

  /**
   * The offset at `instant`, from a cache by UTC hour. An hour is cached only when its first and
   * last second have the same offset (no zone changes twice within an hour), so a change that
   * falls within an hour, as Lord Howe's does at half past, is looked up exactly.
   */
  const offsetAt = (instant: number): number => {
    const hour = Math.floor(instant / HOUR_MS);
    const cached = cache.get(hour);
    if (cached !== undefined) return cached;
    const first = exactOffset(hour * HOUR_MS);
    if (first !== exactOffset(hour * HOUR_MS + HOUR_MS - 1000)) return exactOffset(instant);
    if (cache.size >= MAX_CACHED_HOURS) cache.clear();
    cache.set(hour, first);
    return first;
  };

  return (y, mo, d, h, mi, s, ms) => {
    const wall = utcWallClock(y, mo, d, h, mi, s, ms);
    // Offsets a day either side: no zone changes its offset twice within two days.
    const before = offsetAt(wall - DAY_MS);
    const after = offsetAt(wall + DAY_MS);
    const earlier = Math.max(before, after);
    const later = Math.min(before, after);
    // The candidate with the larger offset is the earlier instant; an overlap takes it.
    if (offsetAt(wall - earlier) === earlier) return wall - earlier;
    if (offsetAt(wall - later) === later) return wall - later;
    // A gap: read the time with the offset in force before the change, which lands after it.
    return wall - before;
  };
}
