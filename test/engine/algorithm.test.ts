// The statechart algorithm (src/engine/algorithm.ts) on its own, over a small table written for the test and
// configurations given directly: selection, conflicts, exit and entry sets, domains, the state value. The
// differential suites check the whole executor against XState; these name each rule of the algorithm.
import { describe, expect, it } from 'vitest';

import {
  NONE,
  enabledTransitions,
  exitMask,
  initialTransition,
  isDescendant,
  leastCommonAncestor,
  matchesValue,
  stateValue,
  statesToEnter,
  transitionDomain,
  type MachineEvent,
} from '../../src/engine/algorithm.js';
import { compileTable } from '../../src/engine/compiled-table.js';
import type { MachineTable } from '../../src/engine/machine-table.js';

/*
 * 0 m (compound)
 * 1   idle: GO -> other if `no`, else -> busy; PING (no target) if `yes` and not `no`
 * 2   other: eventless -> idle if the event is big
 * 3   busy (parallel): STOP -> idle
 * 4     left: 5 l1 (STOP -> l2, NEXT -> idle, HOP -> l2), 6 l2
 * 7     right: 8 r1 (NEXT -> other, HOP -> r2), 9 r2
 */
const table: MachineTable = {
  id: 'm',
  states: [
    { key: 'm', type: 'compound', parent: -1, initial: 1 },
    {
      key: 'idle',
      parent: 0,
      on: {
        GO: [{ targets: [2], guard: 'no' }, { targets: [3] }],
        PING: [{ guard: { and: ['yes', { not: 'no' }] }, actions: ['ping'] }],
      },
    },
    { key: 'other', parent: 0, always: [{ targets: [1], guard: 'big' }] },
    { key: 'busy', type: 'parallel', parent: 0, on: { STOP: [{ targets: [1] }] } },
    { key: 'left', type: 'compound', parent: 3, initial: 5 },
    {
      key: 'l1',
      parent: 4,
      on: { STOP: [{ targets: [6] }], NEXT: [{ targets: [1] }], HOP: [{ targets: [6] }] },
    },
    { key: 'l2', parent: 4 },
    { key: 'right', type: 'compound', parent: 3, initial: 8 },
    { key: 'r1', parent: 7, on: { NEXT: [{ targets: [2] }], HOP: [{ targets: [9] }] } },
    { key: 'r2', parent: 7 },
  ],
};

const compiled = compileTable(table);

const guards = {
  yes: () => true,
  no: () => false,
  big: ({ event }: { event: MachineEvent }) => (event as { n?: number }).n === 2,
};

/** The configuration with the given states active. */
const config = (...states: number[]) => states.reduce((mask, s) => mask | (1 << s), 0);
const IDLE = config(0, 1);
const OTHER = config(0, 2);
const BUSY = config(0, 3, 4, 5, 7, 8);

const select = (active: number, type: string, eventless = false, event: object = {}) =>
  enabledTransitions(compiled, active, { type, ...event }, eventless, guards, {});

describe('the statechart algorithm', () => {
  it('is compiled once per table', () => {
    expect(compileTable(table)).toBe(compiled);
  });

  it('enters the root and its initial state first', () => {
    expect(statesToEnter(compiled, initialTransition(compiled), true)).toEqual([0, 1]);
    expect(initialTransition(compiled)).toBe(initialTransition(compiled));
  });

  describe('selection', () => {
    it('takes the first transition whose guard passes, in the table’s order', () => {
      const [t, ...rest] = select(IDLE, 'GO');
      expect(rest).toEqual([]);
      expect(t!.row.targets).toEqual([3]);
      expect(t!.source).toBe(1);
    });

    it('checks `and` and `not` of named guards', () => {
      expect(select(IDLE, 'PING').map((t) => t.row.actions)).toEqual([['ping']]);
    });

    it('selects nothing (the one empty list) for an event no active state handles', () => {
      expect(select(IDLE, 'STOP')).toBe(NONE);
      expect(select(IDLE, 'UNKNOWN')).toBe(NONE);
    });

    it('gives the same list for the same one transition, step after step (no list made per step)', () => {
      expect(select(IDLE, 'GO')).toBe(select(IDLE, 'GO'));
    });

    it('selects eventless transitions only when asked, their guards given the event being handled', () => {
      expect(select(OTHER, 'X', false, { n: 2 })).toBe(NONE);
      expect(select(OTHER, 'X', true, { n: 1 })).toBe(NONE);
      expect(select(OTHER, 'X', true, { n: 2 }).map((t) => t.row.targets)).toEqual([[1]]);
    });

    it('takes an atomic state’s own transition over its ancestor’s when both would leave the same states', () => {
      expect(select(BUSY, 'STOP').map((t) => t.source)).toEqual([5]);
    });

    it('of two regions leaving their parallel state, takes the first in document order', () => {
      expect(select(BUSY, 'NEXT').map((t) => t.source)).toEqual([5]);
    });

    it('takes one transition per region when they leave different states', () => {
      const both = select(BUSY, 'HOP');
      expect(both.map((t) => t.source)).toEqual([5, 8]);
      expect(statesToEnter(compiled, both, false)).toEqual([6, 9]);
      expect(both.reduce((exit, t) => exit | exitMask(compiled, BUSY, t), 0)).toBe(config(5, 8));
    });
  });

  describe('exit and entry sets', () => {
    it('exits the active states below the domain, and enters the target with its initial descendants', () => {
      const [go] = select(IDLE, 'GO');
      expect(transitionDomain(compiled, go!)).toBe(0);
      expect(exitMask(compiled, IDLE, go!)).toBe(config(1));
      // Every region of the parallel state, each with its initial state, in document order.
      expect(statesToEnter(compiled, [go!], false)).toEqual([3, 4, 5, 7, 8]);
    });

    it('exits and enters nothing for a transition without targets', () => {
      const [ping] = select(IDLE, 'PING');
      expect(exitMask(compiled, IDLE, ping!)).toBe(0);
      expect(statesToEnter(compiled, [ping!], false)).toEqual([]);
    });

    it('leaves every region of a parallel state that a transition leaves', () => {
      const [stop] = select(config(0, 3, 4, 6, 7, 8), 'STOP');
      expect(stop!.source).toBe(3);
      expect(exitMask(compiled, config(0, 3, 4, 6, 7, 8), stop!)).toBe(config(3, 4, 6, 7, 8));
      expect(statesToEnter(compiled, [stop!], false)).toEqual([1]);
    });

    it('keeps a transition within a region to that region', () => {
      const [hop] = select(config(0, 3, 4, 5, 7, 9), 'HOP');
      expect(transitionDomain(compiled, hop!)).toBe(4);
      expect(exitMask(compiled, BUSY, hop!)).toBe(config(5));
    });
  });

  describe('the tree', () => {
    it('knows descendants (every state lies below -1) and least common ancestors', () => {
      expect(isDescendant(compiled, 5, 3)).toBe(true);
      expect(isDescendant(compiled, 3, 5)).toBe(false);
      expect(isDescendant(compiled, 0, -1)).toBe(true);
      expect(leastCommonAncestor(compiled, [5, 8])).toBe(3);
      expect(leastCommonAncestor(compiled, [5, 6])).toBe(4);
      expect(leastCommonAncestor(compiled, [0, 1])).toBe(-1);
    });
  });

  describe('the state value', () => {
    it('is an atomic state’s key, or an object of a parallel state’s regions', () => {
      expect(stateValue(compiled, IDLE)).toBe('idle');
      expect(stateValue(compiled, BUSY)).toEqual({ busy: { left: 'l1', right: 'r1' } });
    });

    it('matches as XState’s `matches` does: a state value, or a part of one', () => {
      const value = stateValue(compiled, BUSY);
      expect(matchesValue('busy', value)).toBe(true);
      expect(matchesValue({ busy: { left: 'l1' } }, value)).toBe(true);
      expect(matchesValue({ busy: { left: 'l2' } }, value)).toBe(false);
      expect(matchesValue('idle', value)).toBe(false);
      expect(matchesValue('idle', 'idle')).toBe(true);
    });
  });
});
