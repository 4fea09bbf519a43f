/**
 * Reading the Retry-After header (RFC 9110 §10.2.3): `Retry-After = HTTP-date / delay-seconds`.
 *
 * Why the cap is not applied here: the value is reported as the server sent it (`Failure.retryAfterMs`), and
 * the engine compares it with `policy.retryAfter.maxMs` and the time left (`planRetryWait`). failwise never
 * waits less than the server asked (CONTRACT rule 5), so clamping a long Retry-After down to the cap would
 * break that rule; instead, a Retry-After longer than `retryAfter.maxMs` ends the request with
 * `retry-after-exceeds-budget` (or defers durable work).
 *
 * Why the dates are parsed here rather than by `Date.parse`: outside ISO 8601, `Date.parse` is
 * implementation-defined. Engines differ on the obsolete forms, and V8 reads an asctime date (which has no
 * zone) as local time, while RFC 9110 says every HTTP-date is GMT.
 */

const DELAY_SECONDS = /^[0-9]+$/;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const DAY_NAME = '(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*';
const TIME = '(\\d{1,2}):(\\d{2}):(\\d{2})';

/**
 * IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` and the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`,
 * read loosely (RFC 9110 §5.6.7 asks recipients to be robust): any case, any run of spaces, dashes or spaces
 * between the date's parts, a two- or four-digit year, GMT or UTC.
 */
const IMF_OR_RFC850 = new RegExp(
  `^${DAY_NAME},\\s*(\\d{1,2})[\\s-]+([a-z]{3})[\\s-]+(\\d{4}|\\d{2})\\s+${TIME}\\s+(?:gmt|utc)$`,
  'i',
);

/** ANSI C asctime `Sun Nov  6 08:49:37 1994` (no zone: it is GMT). */
const ASCTIME = new RegExp(`^${DAY_NAME}\\s+([a-z]{3})\\s+(\\d{1,2})\\s+${TIME}\\s+(\\d{4})$`, 'i');

/**
 * The delay a Retry-After value asks for, in ms from `nowMs`, or `undefined` when there is none to honour.
 *
 * - delay-seconds (`120`; digits only: no sign, no decimal point, no inner spaces; surrounding whitespace is
 *   trimmed): seconds * 1000. `0` gives 0 (retry as soon as the backoff allows). Digits too many for a number
 *   give `Number.MAX_VALUE`: the server asked for longer than anyone will wait, so the request ends rather than
 *   ignore it.
 * - HTTP-date in any of RFC 9110's three forms (IMF-fixdate, RFC 850 and asctime, which recipients MUST
 *   accept): the date minus `nowMs`, rounded up to a whole ms. A date not after `nowMs` gives `undefined`.
 *   A two-digit RFC 850 year more than 50 years ahead of `nowMs` means the century before (RFC 9110).
 * - anything else (empty, negative, `1.5`, `soon`, `12abc`, an impossible date): `undefined`.
 *
 * The result is not capped; see the top of this file.
 *
 * @param value The header's value (`headers.get('retry-after')`), or null/undefined when absent.
 * @param nowMs The current time in ms since the epoch (`clock.now()`), for HTTP-dates.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (DELAY_SECONDS.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isFinite(ms) ? ms : Number.MAX_VALUE;
  }
  const dateMs = parseHttpDate(text, nowMs);
  if (dateMs === undefined) return undefined;
  const delayMs = Math.ceil(dateMs - nowMs);
  return Number.isFinite(delayMs) && delayMs > 0 ? delayMs : undefined;
}

/** An HTTP-date (RFC 9110 §5.6.7) as ms since the epoch, or `undefined` if `text` is not one. */
function parseHttpDate(text: string, nowMs: number): number | undefined {
  const imf = IMF_OR_RFC850.exec(text);
  if (imf !== null) {
    const [, day, month, year, hour, minute, second] = imf;
    return toEpochMs(fullYear(year, nowMs), month, day, hour, minute, second);
  }
  const asctime = ASCTIME.exec(text);
  if (asctime !== null) {
    const [, month, day, hour, minute, second, year] = asctime;
    return toEpochMs(fullYear(year, nowMs), month, day, hour, minute, second);
  }
  return undefined;
}

/** A two-digit year is the one in the century nearest `nowMs`, never more than 50 years ahead. */
function fullYear(year: string | undefined, nowMs: number): number {
  const value = Number(year);
  if (year === undefined || year.length !== 2) return value;
  const nowYear = Number.isFinite(nowMs) ? new Date(nowMs).getUTCFullYear() : 2000;
  let candidate = nowYear - (nowYear % 100) + value;
  if (candidate > nowYear + 50) candidate -= 100;
  else if (candidate < nowYear - 50) candidate += 100;
  return candidate;
}

function toEpochMs(
  year: number,
  monthName: string | undefined,
  dayText: string | undefined,
  hourText: string | undefined,
  minuteText: string | undefined,
  secondText: string | undefined,
): number | undefined {
  const month = MONTHS.indexOf((monthName ?? '').toLowerCase());
  const [day, hour, minute, second] = [dayText, hourText, minuteText, secondText].map(Number) as [
    number,
    number,
    number,
    number,
  ];
  // 60 is a leap second (RFC 9110 allows it); it reads as the first second of the next minute.
  if (month < 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month, day); // setUTCFullYear, unlike Date.UTC, does not read 0..99 as 1900..1999
  date.setUTCHours(hour, minute, second, 0);
  // A day the month does not have (31 Nov) rolls over into the next month: refuse it.
  const dayOfMonth = new Date(date.getTime() - (second === 60 ? 1000 : 0)).getUTCDate();
  return dayOfMonth === day ? date.getTime() : undefined;
}
