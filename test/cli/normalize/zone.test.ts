import { describe, expect, it } from 'vitest';
import { isKnownTimeZone, localTimeResolver } from '../../../src/cli/normalize/zone.js';

/** Temporal's `disambiguation: 'compatible'`: gaps move forward by their length, overlaps take the earlier instant. */
describe('localTimeResolver', () => {
  const berlin = localTimeResolver('Europe/Berlin');
  const newYork = localTimeResolver('America/New_York');
  const sydney = localTimeResolver('Australia/Sydney');
  const iso = (ms: number) => new Date(ms).toISOString();

  it('reads a fixed offset as ISO 8601 writes it, east positive, with no daylight saving', () => {
    expect(iso(localTimeResolver('+05:30')(2025, 1, 1, 0, 0, 0, 0))).toBe('2024-12-31T18:30:00.000Z');
    expect(iso(localTimeResolver('-0800')(2025, 7, 1, 9, 0, 0, 0))).toBe('2025-07-01T17:00:00.000Z');
    expect(iso(localTimeResolver('+09')(2025, 3, 30, 2, 30, 0, 0))).toBe('2025-03-29T17:30:00.000Z');
    expect(iso(localTimeResolver('+14:00')(2025, 1, 1, 0, 0, 0, 0))).toBe('2024-12-31T10:00:00.000Z');
    // IANA's Etc/GMT-1 is UTC+1: the fixed offset says what it means.
    expect(localTimeResolver('+01:00')(2025, 1, 1, 0, 0, 0, 0)).toBe(
      localTimeResolver('Etc/GMT-1')(2025, 1, 1, 0, 0, 0, 0),
    );
  });

  it('knows fixed offsets up to ±14:00 with minutes under 60, and nothing else of that shape', () => {
    for (const zone of ['+01:00', '-05:30', '+0100', '+01', '-14:00', '+00:00'])
      expect(isKnownTimeZone(zone)).toBe(true);
    for (const zone of ['+15:00', '+01:60', '+1', '01:00', '+01:00:00', 'UTC+1', '+1:00'])
      expect(isKnownTimeZone(zone)).toBe(false);
  });

  it('uses the offset in force on the day, winter and summer', () => {
    expect(iso(berlin(2025, 1, 15, 12, 0, 0, 0))).toBe('2025-01-15T11:00:00.000Z');
    expect(iso(berlin(2025, 7, 15, 12, 0, 0, 0))).toBe('2025-07-15T10:00:00.000Z');
    expect(iso(sydney(2025, 1, 15, 12, 0, 0, 0))).toBe('2025-01-15T01:00:00.000Z');
  });

  it('moves a time in the spring-forward gap forward by the gap', () => {
    // Berlin skipped 02:00-03:00 on 2025-03-30: 02:30 is read as 03:30 CEST.
    expect(iso(berlin(2025, 3, 30, 2, 30, 0, 0))).toBe('2025-03-30T01:30:00.000Z');
    // New York skipped 02:00-03:00 on 2025-03-09: 02:15 is read as 03:15 EDT.
    expect(iso(newYork(2025, 3, 9, 2, 15, 0, 0))).toBe('2025-03-09T07:15:00.000Z');
    // Sydney skipped 02:00-03:00 on 2025-10-05.
    expect(iso(sydney(2025, 10, 5, 2, 30, 0, 0))).toBe('2025-10-04T16:30:00.000Z');
  });

  it('takes the earlier of the two instants of a time that repeats when the clocks go back', () => {
    expect(iso(berlin(2025, 10, 26, 2, 30, 0, 0))).toBe('2025-10-26T00:30:00.000Z');
    expect(iso(newYork(2025, 11, 2, 1, 30, 0, 0))).toBe('2025-11-02T05:30:00.000Z');
    expect(iso(sydney(2025, 4, 6, 2, 30, 0, 0))).toBe('2025-04-05T15:30:00.000Z');
  });

  it('reads the times just around a change exactly, to the millisecond', () => {
    expect(iso(berlin(2025, 3, 30, 1, 59, 59, 999))).toBe('2025-03-30T00:59:59.999Z');
    expect(iso(berlin(2025, 3, 30, 3, 0, 0, 0))).toBe('2025-03-30T01:00:00.000Z');
    expect(iso(berlin(2025, 10, 26, 3, 0, 0, 0))).toBe('2025-10-26T02:00:00.000Z');
  });

  it('knows IANA zones and refuses made-up ones', () => {
    expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
    expect(isKnownTimeZone('UTC')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus')).toBe(false);
    expect(isKnownTimeZone('CEST+1')).toBe(false);
  });
});

describe('localTimeResolver around changes that fall within an hour', () => {
  it("reads Lord Howe's half-hour change, at 02:00 local (15:30 UTC), exactly", () => {
    const lordHowe = localTimeResolver('Australia/Lord_Howe');
    const iso = (ms: number) => new Date(ms).toISOString();
    // 2025-10-05 02:00 +10:30 becomes 02:30 +11:00: 01:59 is +10:30, 02:30 is +11:00, 02:15 is in the gap.
    expect(iso(lordHowe(2025, 10, 5, 1, 59, 0, 0))).toBe('2025-10-04T15:29:00.000Z');
    expect(iso(lordHowe(2025, 10, 5, 2, 30, 0, 0))).toBe('2025-10-04T15:30:00.000Z');
    expect(iso(lordHowe(2025, 10, 5, 2, 15, 0, 0))).toBe('2025-10-04T15:45:00.000Z');
    // Each hour of that day asked in turn: the cache never serves a wrong offset.
    for (let hour = 0; hour < 24; hour++) {
      const ms = lordHowe(2025, 10, 5, hour, 0, 0, 0);
      const wall = new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Australia/Lord_Howe',
        hour: '2-digit',
        hourCycle: 'h23',
      }).format(ms);
      expect(Number(wall)).toBe(hour === 2 ? 2 : hour);
    }
  });
});
