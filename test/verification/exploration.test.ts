import { describe, expect, it } from 'vitest';
import type { MachineLogic, StepImpl } from '../../src/engine/machine-logic.js';
import type { MachineTable } from '../../src/engine/machine-table.js';
import type { OutboxMachineContext } from '../../machines/outbox/outbox.types.js';
import { explore, type Exploration } from '../../scripts/verify/explore.js';
import { healthModel } from '../../scripts/verify/health-model.js';
import { outboxModel } from '../../scripts/verify/outbox-model.js';
import type { MachineModel } from '../../scripts/verify/machine-model.js';
import { reportTable } from '../../scripts/verify/report.js';
import { requestModel } from '../../scripts/verify/request-model.js';
import { invertGuard, mapTransitions } from '../engine/differential-harness.js';

/**
 * The quick part of `npm run verify` (docs/verification.md): the same exhaustive exploration with smaller
 * bounds, and deliberately broken tables that each check must catch, so that a passing verdict means something.
 */
const CAP = { maxStates: 200_000 };

/** The model run on another table, from the inputs whose label passes `only`. */
function broken<M>(
  model: MachineModel<M>,
  table: MachineTable,
  only: (label: string) => boolean,
): MachineModel<M> {
  return { ...model, run: { ...model.run, table }, inputs: model.inputs.filter((i) => only(i.label)) };
}

/** The table without the transitions `drop` names by source state key and event type. */
function withoutTransitions(table: MachineTable, drop: readonly [string, string][]): MachineTable {
  return {
    ...table,
    states: table.states.map((state) => ({
      ...state,
      on: Object.fromEntries(
        Object.entries(state.on ?? {}).filter(
          ([type]) => !drop.some(([key, t]) => key === state.key && type.startsWith(t)),
        ),
      ),
    })),
  };
}

const checks = (e: Exploration) => new Set(e.violations.map((v) => v.check));

describe('exhaustive exploration (small bounds)', () => {
  it('finds no violation in the request and origin-health machines', () => {
    const explorations = [
      explore(requestModel({ maxAttempts: [1, 2], methods: ['GET', 'POST', 'PUT'] }), CAP),
      explore(healthModel({ maxEvents: 3 }), CAP),
    ];
    console.log(reportTable(explorations));
    for (const e of explorations) {
      expect(e.violations, e.machine).toEqual([]);
      expect(e.tableStates.unreachable, e.machine).toEqual([]);
    }
    // The request machine's search, server holds included, reaches about 34,000 states.
  }, 240_000);

  it('finds no violation in the outbox with two entries, with the same orderKey and with different ones', () => {
    // The store always answers with its success and a send is sent or fails retryably: every interleaving of
    // two entries' claims, sends and writes with the lease's and the queue's timers (`npm run verify` tries
    // more answers).
    const explorations = (['same', 'different'] as const).map((keys) =>
      explore(outboxModel({ entries: 2, keys, answers: 'fewest', callerEvents: 0, online: [true] }), CAP),
    );
    console.log(reportTable(explorations));
    for (const e of explorations) {
      expect(e.violations, e.machine).toEqual([]);
      // Both entries sent at once when their keys differ; the second waits for the first when they share one.
      expect(e.states, e.machine).toBeGreaterThan(1_000);
    }
  }, 180_000);

  describe('catches a broken machine', () => {
    const request = requestModel({ maxAttempts: [2], methods: ['POST'] });

    it('(d) a keyless write retried: isSafeToReplay inverted', () => {
      const table = invertGuard(request.run.table, 'isSafeToReplay');
      const e = explore(
        broken(request, table, (l) => l === 'POST max 2'),
        CAP,
      );
      expect(checks(e)).toContain('d');
      expect(e.violations.find((v) => v.check === 'd')!.message).toMatch(/keyless write was sent again/);
    });

    it('(b) a state never entered: the transition to refreshingAuth removed', () => {
      const table = mapTransitions(request.run.table, (row) =>
        row.targets?.includes(request.run.table.states.findIndex((s) => s.key === 'refreshingAuth'))
          ? { ...row, guard: { and: [{ not: 'isSuccess' }, 'isSuccess'] } }
          : row,
      );
      const e = explore(
        broken(request, table, (l) => l.includes('auth')),
        CAP,
      );
      expect(e.violations).toContainEqual(
        expect.objectContaining({
          check: 'b',
          message: 'state request.active.refreshingAuth is never entered',
        }),
      );
    }, 60_000);

    it('(a) a state that cannot end on its own: the budget and backoff timers removed', () => {
      const table = withoutTransitions(request.run.table, [
        ['active', 'xstate.after.requestBudget'],
        ['backingOff', 'xstate.after.backoffDelay'],
      ]);
      const e = explore(
        broken(request, table, (l) => l === 'POST max 2 key'),
        CAP,
      );
      expect(checks(e)).toContain('a');
    });

    it('(c) a failover without its criterion: tripsFailover inverted', () => {
      const health = healthModel({ maxEvents: 2 });
      const e = explore(
        broken(health, invertGuard(health.run.table, 'tripsFailover'), () => true),
        CAP,
      );
      expect(checks(e)).toContain('c');
    });

    it('(e) entries of one orderKey sent together: dispatchDue blind to orderKey', () => {
      const outbox = outboxModel({
        entries: 2,
        keys: 'same',
        answers: 'fewest',
        callerEvents: 0,
        online: [true],
      });
      const logic = outbox.run.logic as MachineLogic<OutboxMachineContext, unknown>;
      const dispatch = logic.actions.dispatchDue as StepImpl<OutboxMachineContext>;
      // Entries without an orderKey wait for nobody under `per-key`: the two are planned as if unrelated.
      const blind: StepImpl<OutboxMachineContext> = {
        kind: 'step',
        run: ({ context, event }, params) =>
          dispatch.run(
            {
              context: { ...context, entries: context.entries.map((e) => ({ ...e, orderKey: undefined })) },
              event,
            },
            params,
          ),
      };
      const broken = {
        ...outbox,
        run: { ...outbox.run, logic: { ...logic, actions: { ...logic.actions, dispatchDue: blind } } },
      } as MachineModel<unknown>;
      // The first such send is a few steps in: a small cap is enough (the search stops there, failing 'bound').
      const e = explore(broken, { maxStates: 2_000 });
      expect(checks(e)).toContain('e');
      expect(e.violations.find((v) => v.check === 'e')!.message).toMatch(/before it in its group/);
    }, 120_000);

    it('(bound) fails loudly when the cap is hit', () => {
      const e = explore(request, { maxStates: 50 });
      expect(e.capHit).toBe(true);
      expect(checks(e)).toContain('bound');
    });
  });
});
