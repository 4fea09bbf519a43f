import { describe, expect, it } from 'vitest';
import { SPREAD_WINDOW, spreadUnkeyed } from '../../src/runtime/claim-spread.js';

type Item = { id: string; orderKey?: string | undefined };
const ids = (items: Item[]) => items.map((item) => item.id);
const unkeyed = (count: number, from = 0): Item[] =>
  Array.from({ length: count }, (_, i) => ({ id: `u${from + i}` }));

describe('spreadUnkeyed: the order a runner sharing a queue walks the entries it reads', () => {
  it('keeps every keyed entry in its place, and the entries without a key in the places they had', () => {
    const entries: Item[] = [
      { id: 'u0' },
      { id: 'a1', orderKey: 'a' },
      { id: 'u1' },
      { id: 'b1', orderKey: 'b' },
      { id: 'a2', orderKey: 'a' },
      { id: 'u2' },
      { id: 'u3' },
    ];
    for (const owner of ['runner-0', 'runner-1', 'runner-2', 'x']) {
      const spread = spreadUnkeyed(entries, owner);
      expect(spread.map((item) => item.orderKey)).toEqual([
        undefined,
        'a',
        undefined,
        'b',
        'a',
        undefined,
        undefined,
      ]);
      expect(ids(spread.filter((item) => item.orderKey === undefined)).sort()).toEqual([
        'u0',
        'u1',
        'u2',
        'u3',
      ]);
    }
  });

  it('gives the same runner the same order every time, and different runners different orders', () => {
    const entries = unkeyed(SPREAD_WINDOW);
    const first = ids(spreadUnkeyed(entries, 'runner-a'));
    expect(ids(spreadUnkeyed(entries, 'runner-a'))).toEqual(first);
    // 32! orders: two owners agreeing on the whole window would be a broken hash, not chance.
    expect(ids(spreadUnkeyed(entries, 'runner-b'))).not.toEqual(first);
    // ...and the runners start on different entries, which is what keeps them from asking for the same one.
    const starts = new Set(
      ['r0', 'r1', 'r2', 'r3', 'r4'].map((owner) => spreadUnkeyed(entries, owner)[0]!.id),
    );
    expect(starts.size).toBeGreaterThan(1);
    // Not the store's order either.
    expect(first).not.toEqual(ids(entries));
  });

  it('moves entries only within windows of SPREAD_WINDOW unkeyed entries, so a backlog goes roughly oldest first', () => {
    const entries = unkeyed(SPREAD_WINDOW * 2 + 5);
    const spread = ids(spreadUnkeyed(entries, 'runner-a'));
    const window = (from: number, to: number) => ids(entries.slice(from, to)).sort();
    expect(spread.slice(0, SPREAD_WINDOW).sort()).toEqual(window(0, SPREAD_WINDOW));
    expect(spread.slice(SPREAD_WINDOW, SPREAD_WINDOW * 2).sort()).toEqual(
      window(SPREAD_WINDOW, SPREAD_WINDOW * 2),
    );
    expect(spread.slice(SPREAD_WINDOW * 2).sort()).toEqual(window(SPREAD_WINDOW * 2, SPREAD_WINDOW * 2 + 5));
  });

  it('counts a window in entries without a key, however many keyed ones sit between them', () => {
    const entries: Item[] = [];
    for (let i = 0; i < SPREAD_WINDOW + 1; i++) {
      entries.push({ id: `u${i}` }, { id: `k${i}`, orderKey: 'k' });
    }
    const spread = spreadUnkeyed(entries, 'runner-a');
    // The last entry without a key is alone in the second window: it stays last of them.
    expect(ids(spread.filter((item) => item.orderKey === undefined)).at(-1)).toBe(`u${SPREAD_WINDOW}`);
    expect(ids(spread.filter((item) => item.orderKey === 'k'))).toEqual(
      Array.from({ length: SPREAD_WINDOW + 1 }, (_, i) => `k${i}`),
    );
  });

  it('returns a new array and leaves the one it was given as it was', () => {
    const entries = unkeyed(5);
    const before = ids(entries);
    const spread = spreadUnkeyed(entries, 'runner-a');
    expect(spread).not.toBe(entries);
    expect(ids(entries)).toEqual(before);
    expect(spreadUnkeyed([], 'runner-a')).toEqual([]);
  });
});
