// The runner seam's `runEffects`: a request machine's effects are answered by the run's own object (its observer),
// called as its methods, in the lean executor and in XState alike; an effect the client has no part for keeps the
// machine's default.
import { describe, expect, it } from 'vitest';

import type { LeanEnd } from '../../src/engine/lean-actor.js';
import { leanRunner, type MachineRunner } from '../../src/engine/machine-runner.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { defaultPolicy } from '../../src/policy/defaults.js';
import { prepareRequestMachine } from '../../src/runtime/prepare-request-machine.js';
import { xstateRunner } from '../../src/runtime/with-inspector.js';
import type {
  ChooseOriginInput,
  RequestMachineContext,
  RequestMachineInput,
} from '../../machines/request/request.types.js';

/** One run's own object: it observes its run and answers its effects, recording who was asked (`this`). */
class OwnRun {
  readonly asked: string[] = [];
  end: LeanEnd | undefined;
  private resolveEnded: () => void = () => undefined;
  readonly finished = new Promise<void>((resolve) => (this.resolveEnded = resolve));

  constructor(private readonly status: number) {}

  chooseOrigin(input: ChooseOriginInput) {
    this.asked.push(`chooseOrigin ${this instanceof OwnRun}`);
    return { origin: input.origins[0], at: 0 };
  }

  claimRetry() {
    this.asked.push(`claimRetry ${this instanceof OwnRun}`);
    return { granted: true, at: 0 };
  }

  // The attempt reads the machine's context (`contextInputs`), in either runner.
  transport(context: RequestMachineContext, signal: AbortSignal) {
    this.asked.push(
      `transport ${context.attempts} ${this instanceof OwnRun} ${signal instanceof AbortSignal}`,
    );
    return Promise.resolve({
      kind: 'response' as const,
      response: new Response(null, { status: this.status }),
      at: 0,
    });
  }

  ended(end: LeanEnd) {
    this.end = end;
    this.resolveEnded();
  }
}

const input: RequestMachineInput = {
  requestId: 'r1',
  method: 'GET',
  origins: ['primary'],
  write: false,
  policy: {
    ...defaultPolicy,
    attempts: { max: 2 },
    backoff: { ...defaultPolicy.backoff, initialMs: 0, maxMs: 0 },
  },
  budgetMs: 10_000,
  startedAt: 0,
  canRefreshAuth: false,
  canReconcile: false,
  deferrable: false,
};

describe.each([
  ['the lean executor', leanRunner],
  ['XState', xstateRunner()],
] as [string, MachineRunner][])('prepareRequestMachine in %s', (_, runner) => {
  it("asks the run's own object for its origin, its retry slot and each attempt", async () => {
    const clock = simulatedClock();
    const own = new OwnRun(503);
    prepareRequestMachine(runner, clock, { auth: false, reconcile: false }).start(input, own);
    // XState arms a timer for the 0 ms backoff (the lean executor waits a microtask).
    for (let i = 0; i < 10 && own.end === undefined; i++) await clock.increment(0);
    await own.finished;
    expect(own.end).toMatchObject({ status: 'done', output: { status: 'failed', attempts: 2 } });
    expect(own.asked).toEqual([
      'chooseOrigin true',
      'transport 1 true true',
      'claimRetry true',
      'chooseOrigin true',
      'transport 2 true true',
    ]);
  });

  it('keeps the machine default for an effect the client has no part for (no auth: a 401 is not refreshed)', async () => {
    const clock = simulatedClock();
    const own = new OwnRun(401);
    prepareRequestMachine(runner, clock, { auth: false, reconcile: false }).start(input, own);
    await own.finished;
    expect(own.end).toMatchObject({ status: 'done', output: { status: 'failed', reason: 'unauthorized' } });
    expect(own.asked).toEqual(['chooseOrigin true', 'transport 1 true true']);
  });
});
