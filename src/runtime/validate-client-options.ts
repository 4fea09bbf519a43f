import * as z from 'zod/mini';
import { definePolicy } from '../policy/define-policy.js';
import type { Policy } from '../policy/policy.js';
import { toPolicyIssues } from '../policy/zod-issues.js';
import { PolicyError, type PolicyIssue } from '../errors/policy-error.js';
import type { FailoverClientOptions, OriginConfig } from './client-options.js';

export interface ResolvedOrigin extends Required<OriginConfig> {
  /** The URL without a trailing slash, ready to join with a path. */
  base: string;
  host: string;
}

const fn = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', {
  error: 'expected a function',
});
const withMethods = (...names: string[]) =>
  z.looseObject(Object.fromEntries(names.map((name) => [name, fn])), { error: 'expected an object' });

/** Unknown options and origin fields are errors, as in the policy: a typo must not be ignored. */
const optionsSchema = z.strictObject(
  {
    origins: z
      .array(
        z.strictObject(
          {
            id: z
              .string({ error: 'expected a non-empty string' })
              .check(z.minLength(1, 'expected a non-empty string')),
            url: z.string({ error: 'expected an absolute URL such as "https://api.example.com"' }),
            allowInsecure: z.optional(z.boolean({ error: 'expected a boolean' })),
            credentials: z.optional(z.enum(['send', 'omit'], { error: 'expected "send" or "omit"' })),
          },
          {
            error: (issue) =>
              issue.code === 'unrecognized_keys' ? 'unknown option' : 'expected an object { id, url }',
          },
        ),
        { error: 'expected a non-empty array of { id, url }' },
      )
      .check(z.minLength(1, 'expected a non-empty array of { id, url }')),
    policy: z.optional(z.unknown()),
    transport: z.optional(withMethods('send')),
    clock: z.optional(withMethods('now', 'setTimeout', 'clearTimeout')),
    auth: z.optional(withMethods('headers', 'refresh')),
    reconcile: z.optional(fn),
    onEvent: z.optional(fn),
    random: z.optional(fn),
    generateIdempotencyKey: z.optional(fn),
    inspect: z.optional(
      z.union([fn, z.looseObject({})], { error: 'expected an inspection observer or function' }),
    ),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown option' : 'expected an object') },
);

/**
 * Checks every option of `createFailoverClient` and reports all bad fields at once, by path, in one
 * `PolicyError` (like the policy itself): `origins[1].url: expected an http(s) URL, got protocol "ftp:"`.
 */
export function validateClientOptions(options: FailoverClientOptions): {
  origins: ResolvedOrigin[];
  policy: Policy;
} {
  const parsed = optionsSchema.safeParse(options);
  const issues: PolicyIssue[] = parsed.success ? [] : toPolicyIssues(parsed.error.issues, '');
  // The URL rules run on every origin that has a string url, even when another field failed, so that one
  // error lists every bad field.
  const given: unknown = (options as { origins?: unknown } | null)?.origins;
  const origins = resolveOrigins(Array.isArray(given) ? given : [], issues);
  let policy: Policy | undefined;
  try {
    policy = definePolicy((options as { policy?: Parameters<typeof definePolicy>[0] } | null)?.policy);
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    issues.push(...error.issues);
  }
  if (issues.length > 0 || policy === undefined) throw new PolicyError(issues);
  return { origins, policy };
}

/** The URL rules zod cannot express: unique ids, https unless allowInsecure (rule 8), nothing secret in the URL. */
function resolveOrigins(origins: readonly unknown[], issues: PolicyIssue[]): ResolvedOrigin[] {
  const seen = new Set<unknown>();
  return origins.flatMap((origin, i) => {
    const { id, url, allowInsecure, credentials } = (origin ?? {}) as Partial<
      Record<keyof OriginConfig, unknown>
    >;
    const fail = (field: string, message: string) => (
      issues.push({ path: `origins[${i}].${field}`, message }),
      []
    );
    if (typeof id === 'string' && seen.has(id)) fail('id', `duplicate origin id "${id}"`);
    seen.add(id);
    if (typeof url !== 'string') return [];
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return fail('url', 'expected an absolute URL such as "https://api.example.com"');
    }
    if (parsed.protocol === 'http:' && allowInsecure !== true) {
      return fail('url', 'http: is refused; use https: or set allowInsecure: true (CONTRACT rule 8)');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      return fail('url', `expected an http(s) URL, got protocol "${parsed.protocol}"`);
    }
    if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
      return fail('url', 'must not contain a query, fragment or credentials; send credentials with `auth`');
    }
    // Shapes were checked by the schema; an origin with a bad field is reported there and left out here.
    return [
      {
        id: id as string,
        url,
        allowInsecure: allowInsecure === true,
        credentials: credentials === 'omit' ? ('omit' as const) : ('send' as const),
        base: parsed.href.replace(/\/+$/, ''),
        host: parsed.host,
      },
    ];
  });
}
