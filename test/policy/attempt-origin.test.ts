import { describe, expect, it } from 'vitest';

import { attemptOrigin, type OriginChooser, type OriginHolds } from '../../src/policy/attempt-origin.js';

/** An origin set of `primary` then `backup`, where writes may go to the primary only. */
const origins = (unheld: string | undefined = 'backup'): OriginChooser => ({
  choose: (write, avoid) =>
    write
      ? 'primary'
      : (['primary', 'backup'].find((origin) => !(avoid ?? []).includes(origin)) ?? 'primary'),
  chooseUnheld: (write) => (write ? undefined : unheld),
});
const noHolds: OriginHolds = { until: () => undefined };
const held = (origin: string, until: number): OriginHolds => ({
  until: (asked, at) => (asked === origin && at < until ? until : undefined),
});

describe('attemptOrigin', () => {
  it('sends the attempt where the origin set says', () => {
    expect(attemptOrigin({}, false, origins(), noHolds, 10)).toEqual({ origin: 'primary', at: 10 });
  });

  it('sends a retried read to another origin than those that failed it', () => {
    expect(attemptOrigin({ avoid: ['primary'] }, false, origins(), noHolds, 10)).toEqual({
      origin: 'backup',
      at: 10,
    });
  });

  it('keeps a pinned write on the origin its last attempt went to', () => {
    const ask = { pinned: true, previousOrigin: 'backup', avoid: ['backup'] };
    expect(attemptOrigin(ask, true, origins(), noHolds, 10)).toEqual({ origin: 'backup', at: 10 });
  });

  it('names no origin when the origin set has none', () => {
    const none: OriginChooser = { choose: () => undefined, chooseUnheld: () => undefined };
    expect(attemptOrigin({}, false, none, held('primary', 100), 10)).toEqual({ origin: undefined, at: 10 });
  });

  it('gives a held origin with its hold and an origin free of holds', () => {
    expect(attemptOrigin({}, false, origins(), held('primary', 100), 10)).toEqual({
      origin: 'primary',
      at: 10,
      holdUntil: 100,
      alternative: 'backup',
    });
  });

  it('gives a pinned write held at its origin no alternative', () => {
    const ask = { pinned: true, previousOrigin: 'primary' };
    expect(attemptOrigin(ask, true, origins(), held('primary', 100), 10)).toEqual({
      origin: 'primary',
      at: 10,
      holdUntil: 100,
      alternative: undefined,
    });
  });

  it('reads the hold at the time it is given', () => {
    expect(attemptOrigin({}, false, origins(), held('primary', 100), 100)).toEqual({
      origin: 'primary',
      at: 100,
    });
  });
});
