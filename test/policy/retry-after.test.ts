import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/policy/retry-after.js';

/** Sun, 06 Nov 1994 08:49:00 GMT: 37 s before RFC 9110's example date. */
const now = Date.UTC(1994, 10, 6, 8, 49, 0);

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120_000],
    ['1', 1000],
    ['0', 0],
    ['007', 7000],
    [' 5 ', 5000],
    ['\t5\t', 5000],
    ['99999999999', 99_999_999_999_000],
  ])('reads delay-seconds %j as %d ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('reads delay-seconds too long for a number as the largest finite number, so the request ends', () => {
    expect(parseRetryAfter('9'.repeat(400), now)).toBe(Number.MAX_VALUE);
  });

  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT', 37_000],
    ['IMF-fixdate in lower case', 'sun, 06 nov 1994 08:49:37 gmt', 37_000],
    ['IMF-fixdate with UTC', 'Sun, 06 Nov 1994 08:49:37 UTC', 37_000],
    ['IMF-fixdate with a one-digit day', 'Sun, 6 Nov 1994 08:49:37 GMT', 37_000],
    ['IMF-fixdate a day later', 'Mon, 07 Nov 1994 08:49:00 GMT', 86_400_000],
    ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT', 37_000],
    ['RFC 850 with a four-digit year', 'Sunday, 06-Nov-1994 08:49:37 GMT', 37_000],
    ['asctime', 'Sun Nov  6 08:49:37 1994', 37_000],
    ['asctime with a two-digit day', 'Sun Nov 06 08:49:37 1994', 37_000],
    ['a leap second', 'Sun, 06 Nov 1994 08:59:60 GMT', 660_000],
  ])('reads an HTTP-date in %s as the time until then', (_, value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('reads an asctime date as GMT whatever the local time zone', () => {
    const zone = process.env['TZ'];
    process.env['TZ'] = 'America/New_York';
    try {
      expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBe(37_000);
    } finally {
      if (zone === undefined) delete process.env['TZ'];
      else process.env['TZ'] = zone;
    }
  });

  it.each([
    [0.25, 37_000],
    [0.75, 37_000],
    [1000.5, 36_000],
  ])('rounds the time until a date up to a whole ms (now + %d ms: %d ms)', (offset, expected) => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now + offset)).toBe(expected);
  });

  it.each([
    ['a date in the past', 'Sun, 06 Nov 1994 08:48:59 GMT'],
    ['the date now', 'Sun, 06 Nov 1994 08:49:00 GMT'],
    ['a date long past', 'Thu, 01 Jan 1970 00:00:00 GMT'],
  ])('ignores %s', (_, value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });

  it.each([
    ['absent (null)', null],
    ['absent (undefined)', undefined],
    ['empty', ''],
    ['whitespace only', '  \t '],
    ['negative', '-1'],
    ['signed', '+5'],
    ['decimal', '1.5'],
    ['a decimal point alone', '5.'],
    ['exponent notation', '1e3'],
    ['hexadecimal', '0x10'],
    ['digits with a space inside', '1 2'],
    ['digits then letters', '12abc'],
    ['a unit', '5s'],
    ['a word', 'soon'],
    ['non-ASCII digits', '٣'],
    ['an ISO 8601 date', '1994-11-06T08:49:37Z'],
    ['a date without a zone', 'Sun, 06 Nov 1994 08:49:37'],
    ['a date with another zone', 'Sun, 06 Nov 1994 08:49:37 PST'],
    ['a day the month does not have', 'Wed, 31 Nov 1994 08:49:37 GMT'],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['minute 60', 'Sun, 06 Nov 1994 08:60:00 GMT'],
    ['an unknown month', 'Sun, 06 Nox 1994 08:49:37 GMT'],
    ['day 0', 'Sun, 00 Nov 1994 08:49:37 GMT'],
    ['a date with trailing text', 'Sun, 06 Nov 1994 08:49:37 GMT; retry'],
  ])('gives undefined for a value that is %s', (_, value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });

  it('gives a finite delay for a date far in the future, leaving the cap to the engine', () => {
    const delay = parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', now);
    expect(delay).toBe(Date.UTC(9999, 11, 31, 23, 59, 59) - now);
  });

  describe('with a two-digit RFC 850 year', () => {
    const in2030 = Date.UTC(2030, 5, 1);
    it.each([
      ['31', Date.UTC(2031, 0, 1)],
      ['80', Date.UTC(2080, 0, 1)],
    ])('reads %s as the year in this century when it is at most 50 years ahead', (year, expected) => {
      expect(parseRetryAfter(`Tuesday, 01-Jan-${year} 00:00:00 GMT`, in2030)).toBe(expected - in2030);
    });

    it('reads a year exactly 50 years ahead as in the future, also across a century', () => {
      expect(parseRetryAfter('Saturday, 01-Jan-44 00:00:00 GMT', now)).toBe(Date.UTC(2044, 0, 1) - now);
    });

    it('reads a year more than 50 years ahead as the one a century before (and so in the past)', () => {
      expect(parseRetryAfter('Wednesday, 01-Jan-81 00:00:00 GMT', in2030)).toBeUndefined();
    });

    it('reads a year more than 50 years back as the one a century later', () => {
      const in2099 = Date.UTC(2099, 0, 1);
      expect(parseRetryAfter('Saturday, 01-Jan-01 00:00:00 GMT', in2099)).toBe(Date.UTC(2101, 0, 1) - in2099);
    });
  });
});
