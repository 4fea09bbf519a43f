/**
 * Reading the Retry-After header (RFC 9110 §10.2.3): `Retry-After = HTTP-date / delay-seconds`.
 *
 * Why the cap is not applied here: the value is reported as the server sent it (`Failure.retryAfterMs`), and
 * the engine compares it with `policy.retryAfter.maxMs` and the time left (`planRetryWait`). failwise never
 * waits less than the server asked (rule 5), so clamping a long Retry-After down to the cap would
 * break that rule; instead, a Retry-After longer than `retryAfter.maxMs` ends the request with
 * `retry-after-exceeds-budget` (or defers durable work).
 *
 * Why the dates are parsed here rather than by `Date.parse`: outside ISO 8601, `Date.parse` is
 * implementation-defined. Engines differ on the obsolete forms, and V8 reads an asctime date (which has no
 * zone) as local time, while RFC 9110 says every HTTP-date is GMT.
 */

/**
 * IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` and the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`,
 * read loosely (RFC 9110 §5.6.7 asks recipients to be robust): any case, any run of spaces, dashes or spaces
 * between the date's parts, a two- or four-digit year, GMT or UTC. A second of 60 is a leap second (RFC 9110
 * allows it); it reads as the first second of the next minute.
 */
const IMF_OR_RFC850 =
  /^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,\s*(\d\d?)[\s-]+([a-z]{3})[\s-]+(\d\d(?:\d\d)?)\s+([01]?\d|2[0-3]):([0-5]\d):([0-5]\d|60)\s+(?:gmt|utc)$/i;

/** ANSI C asctime `Sun Nov  6 08:49:37 1994` (no zone: it is GMT), rewritten as an IMF-fixdate. */
const ASCTIME = /^(\w+)\s+(\w+)\s+(\d+)\s+(\S+)\s+(\d{4})$/;

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
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, Number.MAX_VALUE);
  const delayMs = Math.ceil(parseHttpDate(text.replace(ASCTIME, '$1, $3 $2 $5 $4 GMT'), nowMs) - nowMs);
  return delayMs > 0 && delayMs < Infinity ? delayMs : undefined;
}

/** An HTTP-date (RFC 9110 §5.6.7) as ms since the epoch, or NaN if `text` is not one. */
function parseHttpDate(text: string, nowMs: number): number {
  const [, day, month = '', year = '', hour, minute, second] = IMF_OR_RFC850.exec(text) ?? [];
  const monthIndex = 'janfebmaraprmayjunjulaugsepoctnovdec'.indexOf(month.toLowerCase());
  // A two-digit year is the one nearest `nowMs`, never more than 50 years ahead. (A `nowMs` that is not
  // finite makes it NaN, and the delay is refused anyway.)
  const nowYear = new Date(nowMs).getUTCFullYear();
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read 0..99 as 1900..1999.
  date.setUTCFullYear(
    year.length > 2 ? Number(year) : nowYear + ((Number(year) - (nowYear % 100) + 149) % 100) - 49,
    monthIndex / 3,
    Number(day),
  );
  // An unknown month, or a day the month does not have (31 Nov rolls over into December): refuse it.
  return monthIndex % 3 || date.getUTCDate() !== Number(day)
    ? Number.NaN
    : date.setUTCHours(Number(hour), Number(minute), Number(second));
}
