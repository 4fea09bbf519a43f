import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import * as actions from '../../machines/origin-health/origin-health.actions.js';
import { originHealthActors } from '../../machines/origin-health/origin-health.actors.js';
import { originHealthLogic } from '../../machines/origin-health/origin-health.logic.js';
import type {
  OriginHealthContext,
  OriginHealthEvent,
} from '../../machines/origin-health/origin-health.types.js';
import { replyingActor } from '../../src/engine/machine-logic.js';
import { definePolicy } from '../../src/policy/define-policy.js';

// The origin-health machine's context changes and guards at the cases its runs rarely reach, called as the
// machine calls them; expected values from their comments (time never goes back, a backup is ejected after
// failoverAfter counted failures or one TLS failure, only the primary's successes recover it).

const g = originHealthLogic.guards;
const policy = definePolicy({ health: { failoverAfter: 3, recoverAfter: 2, minFailedOverMs: 1_000 } });
const context = (changes: Partial<OriginHealthContext> = {}): OriginHealthContext => ({
  ...actions.initialContext({
    origins: [
      { id: 'primary', accepts: 'all' },
      { id: 'backup', accepts: 'all' },
    ],
    policy,
    now: 10_000,
  }),
  ...changes,
});
const args = (c: OriginHealthContext, event: OriginHealthEvent) => ({ context: c, event });
const failed = (
  origin: string,
  at: number,
  failureClass: 'connect' | 'tls' = 'connect',
): OriginHealthEvent => ({
  type: 'attempt.failed',
  origin,
  failureClass,
  at,
});

describe('origin-health context changes', () => {
  it('tripped: only a counted failure trips anything', () => {
    expect(
      actions.tripped(context(), { type: 'attempt.succeeded', origin: 'primary', at: 10_000 }),
    ).toBeUndefined();
    expect(
      actions.tripped(context(), { type: 'connectivity.changed', online: true, at: 10_000 }),
    ).toBeUndefined();
    expect(actions.tripped(context(), failed('primary', 10_000, 'tls'))).toBe('tls');
  });

  it('tripped: a success or a connectivity change trips nothing, even on a window over the failure ratio', () => {
    // windowMs 30,000 (the default) has buckets of 3,000 ms; the one starting at 9,000 holds 10 outcomes, 6 of
    // them failures. One more success at 10,000 leaves 6 of 11, still at least the ratio of 0.5 over at least
    // minRequests (10); a counted failure there (7 of 11, one in a row, failoverAfter 3) trips the ratio.
    const over = context({
      evidence: {
        consecutiveFailures: 0,
        consecutiveSuccesses: 0,
        window: { buckets: [{ start: 9_000, total: 10, failures: 6 }] },
      },
    });
    expect(
      actions.tripped(over, { type: 'attempt.succeeded', origin: 'primary', at: 10_000 }),
    ).toBeUndefined();
    expect(actions.tripped(over, { type: 'connectivity.changed', online: true, at: 10_000 })).toBeUndefined();
    expect(actions.tripped(over, failed('primary', 10_000))).toBe('failure-ratio');
  });

  it('recordBackupOutcome on the primary only moves the time, never back', () => {
    expect(actions.recordBackupOutcome(args(context(), failed('primary', 12_000)))).toEqual({ now: 12_000 });
    expect(actions.recordBackupOutcome(args(context(), failed('primary', 9_000)))).toEqual({ now: 10_000 });
  });

  it('recordBackupOutcome ejects a backup after failoverAfter counted failures, or one TLS failure', () => {
    const once = actions.recordBackupOutcome(args(context(), failed('backup', 9_000)));
    expect(once).toEqual({ now: 10_000, backupFailures: { backup: 1 }, backupDownUntil: {} });
    const third = actions.recordBackupOutcome(
      args(context({ backupFailures: { backup: 2 } }), failed('backup', 11_000)),
    );
    expect(third).toEqual({
      now: 11_000,
      backupFailures: { backup: 0 },
      backupDownUntil: { backup: 12_000 },
    });
    const tls = actions.recordBackupOutcome(args(context(), failed('backup', 11_000, 'tls')));
    expect(tls).toMatchObject({ backupFailures: { backup: 0 }, backupDownUntil: { backup: 12_000 } });
  });

  it('recordConnectivity reads only connectivity events, and time never goes back', () => {
    expect(actions.recordConnectivity(args(context(), failed('primary', 12_000)))).toEqual({});
    expect(
      actions.recordConnectivity(args(context(), { type: 'connectivity.changed', online: false, at: 9_000 })),
    ).toEqual({ online: false, now: 10_000 });
  });
});

describe('origin-health guards', () => {
  it('recovers: only a success of the primary, never an uncounted failure or a backup’s success', () => {
    // One success in a row already: the next success of the primary makes recoverAfter (2).
    const c = context({
      evidence: { consecutiveFailures: 0, consecutiveSuccesses: 2, window: { buckets: [] } },
    });
    expect(g.recovers(args(c, { type: 'attempt.succeeded', origin: 'primary', at: 10_000 }))).toBe(true);
    expect(g.recovers(args(c, { type: 'attempt.succeeded', origin: 'backup', at: 10_000 }))).toBe(false);
    // A 404 says nothing about the origin: not counted, so the evidence is unchanged, but it is no success.
    expect(
      g.recovers(
        args(c, {
          type: 'attempt.failed',
          origin: 'primary',
          failureClass: 'client-error',
          status: 404,
          at: 10_000,
        }),
      ),
    ).toBe(false);
  });
});

describe('the machines’ default and replying actors', () => {
  it('the default probe rejects, saying what to provide', async () => {
    const actor = createActor(
      createMachine({ invoke: { id: 'p', src: originHealthActors.probe, input: { origin: 'primary' } } }),
    );
    const errors: unknown[] = [];
    actor.subscribe({ error: (error) => errors.push(error) });
    actor.start();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(String(errors[0])).toContain(
      'originHealthMachine: provide a `probe` actor with originHealthMachine.provide({ actors })',
    );
  });

  it('replyingActor aborts its signal when stopped before it replied, and not once it has', async () => {
    const signals: AbortSignal[] = [];
    const replies: ((event: { type: string }) => void)[] = [];
    const logic = replyingActor(
      (_input: undefined, signal) =>
        new Promise((resolve) => {
          signals.push(signal);
          replies.push(resolve);
        }),
    );
    const replied = createActor(logic).start();
    replies[0]!({ type: 'done' });
    await Promise.resolve();
    replied.stop();
    expect(signals[0]!.aborted).toBe(false);
    const stopped = createActor(logic).start();
    stopped.stop();
    expect(signals[1]!.aborted).toBe(true);
  });
});
