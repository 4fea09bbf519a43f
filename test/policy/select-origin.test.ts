import { describe, expect, it } from 'vitest';
import { initialContext } from '../../machines/origin-health/origin-health.actions.js';
import { selectOrigin } from '../../src/policy/select-origin.js';
import type { OriginHealthContext } from '../../machines/origin-health/origin-health.types.js';
import { definePolicy } from '../../src/policy/define-policy.js';

// selectOrigin's `avoid` (Envoy's previous_hosts): the origins that already failed a retried read are passed
// over when another origin the health machine would use may take it, and only then.

const context = (changes: Partial<OriginHealthContext> = {}): OriginHealthContext => ({
  ...initialContext({
    origins: [
      { id: 'primary', accepts: 'all' },
      { id: 'replica', accepts: 'reads' },
      { id: 'backup', accepts: 'all' },
    ],
    policy: definePolicy({}),
    now: 0,
  }),
  ...changes,
});

describe('selectOrigin with origins to avoid', () => {
  it('takes the first origin in order that did not fail the request', () => {
    expect(selectOrigin(context(), 'healthy', false, 0, undefined, ['primary'])).toBe('replica');
    expect(selectOrigin(context(), 'healthy', false, 0, undefined, ['primary', 'replica'])).toBe('backup');
  });

  it('passes over a reads-only origin for a write, and a backup out of rotation', () => {
    expect(selectOrigin(context(), 'healthy', true, 0, undefined, ['primary'])).toBe('backup');
    const down = context({ backupDownUntil: { replica: 5_000 } });
    expect(selectOrigin(down, 'healthy', false, 1_000, undefined, ['primary'])).toBe('backup');
    expect(selectOrigin(down, 'healthy', false, 5_000, undefined, ['primary'])).toBe('replica');
  });

  it('never names a failed-over primary, even when every backup failed the request', () => {
    expect(selectOrigin(context(), 'failedOver', false, 0, undefined, ['replica', 'backup'])).toBe('replica');
    expect(selectOrigin(context(), 'probingFailback', false, 0, undefined, ['replica'])).toBe('backup');
  });

  it('falls back to the origin named without them when every usable origin failed the request', () => {
    expect(selectOrigin(context(), 'healthy', false, 0, undefined, ['primary', 'replica', 'backup'])).toBe(
      'primary',
    );
    expect(selectOrigin(context(), 'healthy', true, 0, undefined, ['primary', 'backup'])).toBe('primary');
  });

  it('keeps skipping held origins (`skip`) whether it avoids or falls back', () => {
    const held = (origin: string) => origin === 'replica';
    expect(selectOrigin(context(), 'healthy', false, 0, held, ['primary'])).toBe('backup');
    expect(selectOrigin(context(), 'healthy', false, 0, held, ['primary', 'backup'])).toBe('primary');
    expect(selectOrigin(context(), 'healthy', false, 0, (o) => o !== 'replica', ['replica'])).toBe('replica');
  });

  it('without origins to avoid, names what it always did', () => {
    expect(selectOrigin(context(), 'healthy', false, 0)).toBe('primary');
    expect(selectOrigin(context(), 'suspect', true, 0, undefined, [])).toBe('primary');
  });
});
