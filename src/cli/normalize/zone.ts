/**
 * Local wall-clock times in an IANA time zone, turned into instants. Offsets come from the
 * platform's time-zone data through `Intl.DateTimeFormat`, never from a table of our own, so
 * daylight-saving rules stay as current as the Node.js that runs the CLI.
 */

const DAY_MS = 86_400_000;

/** Whether `zone` names a time zone this Node.js knows (`Europe/Berlin`, `UTC`). */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Whether the zone is UTC under another name: no offsets to look up, ever. */
function isUtc(zone: string): boolean {
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

/** Offsets looked up, by UTC minute: one export usually has few distinct times of day per zone. */
const MAX_CACHED_OFFSETS = 4096;

/**
 * A resolver for local times in `zone`. A time that does not exist (skipped by a daylight-saving
 * change) moves forward by the length of the gap, and a time that exists twice (the clocks went
 * back) is the earlier of the two instants: what Temporal calls `disambiguation: 'compatible'`,
 * and what `new Date(y, m, d, h)` does in a local zone.
 */
export function localTimeResolver(zone: string): LocalTimeResolver {
  if (isUtc(zone)) return (y, mo, d, h, mi, s, ms) => Date.UTC(y, mo - 1, d, h, mi, s, ms);
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

  /** The zone's offset from UTC at `instant`, in milliseconds (positive east of Greenwich). */
  const offsetAt = (instant: number): number => {
    const minute = Math.floor(instant / 60_000);
    const cached = cache.get(minute);
    if (cached !== undefined) return cached;
    const fields = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
    for (const part of format.formatToParts(minute * 60_000)) {
      if (part.type in fields) fields[part.type as keyof typeof fields] = Number(part.value);
    }
    const wall = Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second);
    const offset = wall - minute * 60_000;
    if (cache.size >= MAX_CACHED_OFFSETS) cache.clear();
    cache.set(minute, offset);
    return offset;
  };

  return (y, mo, d, h, mi, s, ms) => {
    const wall = Date.UTC(y, mo - 1, d, h, mi, s, ms);
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
