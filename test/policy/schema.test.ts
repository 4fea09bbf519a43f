import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as z from 'zod/mini';
import { defaultPolicy } from '../../src/policy/defaults.js';
import type { Policy, PolicyInput } from '../../src/policy/policy.js';
import { describeValue, MAX_TIMER_MS, policyInputSchema } from '../../src/policy/schema.js';

describe('policyInputSchema', () => {
  it('accepts the complete default policy', () => {
    expect(policyInputSchema.safeParse(defaultPolicy).success).toBe(true);
  });

  it('accepts an empty input: every field is optional', () => {
    expect(policyInputSchema.safeParse({}).success).toBe(true);
  });

  it('accepts the longest delay a timer can wait and refuses one ms more', () => {
    expect(policyInputSchema.safeParse({ budgetMs: MAX_TIMER_MS }).success).toBe(true);
    expect(policyInputSchema.safeParse({ budgetMs: MAX_TIMER_MS + 1 }).success).toBe(false);
  });

  it('reports an unknown key at any depth', () => {
    const result = policyInputSchema.safeParse({ extra: 1, backoff: { extra: 2 } });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => [issue.code, issue.path])).toEqual([
      ['unrecognized_keys', ['backoff']],
      ['unrecognized_keys', []],
    ]);
  });

  it('writes its own messages, without a global zod locale', () => {
    const result = policyInputSchema.safeParse({ budgetMs: -1, attempts: { max: 'x' } });
    expect(result.error?.issues.map((issue) => issue.message)).toEqual([
      'expected a number, got "x"',
      'expected a number > 0, got -1',
    ]);
  });

  it('describes the same options as Policy', () => {
    expectTypeOf<keyof z.output<typeof policyInputSchema>>().toEqualTypeOf<keyof Policy>();
    expectTypeOf<PolicyInput>().toExtend<z.input<typeof policyInputSchema>>();
  });
});

describe('describeValue', () => {
  it.each<[unknown, string]>([
    [-1, '-1'],
    [-0, '-0'],
    [Number.NaN, 'NaN'],
    ['x', '"x"'],
    ['a'.repeat(40), `"${'a'.repeat(40)}"`],
    ['a'.repeat(41), `"${'a'.repeat(40)}…"`],
    [true, 'true'],
    [undefined, 'undefined'],
    [null, 'null'],
    [10n, '10n'],
    [Symbol('s'), 'a symbol'],
    [() => 1, 'a function'],
    [[1], 'an array'],
    [{ a: 1 }, 'an object'],
  ])('shows %s as %s', (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });
});
