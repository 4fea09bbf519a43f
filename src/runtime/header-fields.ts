import { describeValue } from '../policy/describe-value.js';
import { HTTP_TOKEN } from '../policy/methods.js';

/** What is wrong with a request's headers: the field (`headers["x-a b"]`, `headers[1]`) and why. */
export interface HeadersProblem {
  field: string;
  message: string;
}

const NOT_HEADERS =
  'expected a Headers object, a record of header names to values, or a list of [name, value] pairs';
const NAME_RULE = "(a token: letters, digits and !#$%&'*+-.^_`|~)";
// The value itself is never shown: it may be a token (rule 9).
const VALUE_RULE = '(no CR, LF or NUL, and no character above U+00FF; the value is not shown)';
const RULE = { name: NAME_RULE, value: VALUE_RULE };

/**
 * Why the host's `new Headers(init)` refused `init`, found again field by field so that the message names the
 * header at fault rather than repeating the host's (undici's quotes the value). Called only after the host
 * threw: what the host takes (a number as a value, say) is never refused here.
 */
export function headersProblem(init: unknown): HeadersProblem {
  const whole = (message: string): HeadersProblem => ({ field: 'headers', message });
  if (typeof init !== 'object' || init === null) return whole(`${NOT_HEADERS}, got ${kindOf(init)}`);
  try {
    if (Array.isArray(init)) {
      for (const [i, pair] of init.entries()) {
        const field = `headers[${i}]`;
        if (!Array.isArray(pair) || pair.length !== 2)
          return {
            field,
            message: `expected a [name, value] pair, got ${Array.isArray(pair) ? `a list of ${pair.length}` : kindOf(pair)}`,
          };
        const bad = badPart(pair[0], pair[1]);
        if (bad) return { field, message: `its ${bad} is not a valid header ${bad} ${RULE[bad]}` };
      }
    } else {
      for (const [name, value] of Object.entries(init)) {
        const bad = badPart(name, value);
        const field = `headers[${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)}]`;
        if (bad === 'name') return { field, message: `not a valid header name ${NAME_RULE}` };
        if (bad) return { field, message: `its value is not a valid header value ${VALUE_RULE}` };
      }
    }
  } catch {
    // A getter that throws, a proxy...: the whole value is at fault.
  }
  return whole(NOT_HEADERS);
}

/** A value as a message may show it: a string only by its kind, since a misplaced one may be a token. */
const kindOf = (value: unknown): string => (typeof value === 'string' ? 'a string' : describeValue(value));

/** Which part of a header fetch would refuse, if any. */
function badPart(name: unknown, value: unknown): 'name' | 'value' | undefined {
  if (typeof name !== 'string' || !HTTP_TOKEN.test(name)) return 'name';
  if (typeof value === 'symbol') return 'value';
  // As fetch reads a value: converted to a string, trimmed of spaces, tabs, CR and LF, then checked.
  let text: string;
  try {
    text = String(value);
  } catch {
    return 'value';
  }
  if (/[\0\r\n]|[^\0-\u00ff]/.test(text.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ''))) return 'value';
  return undefined;
}
