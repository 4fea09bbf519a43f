import { timeLeftMs } from '../../src/policy/budget.js';
import { attemptTimeoutMs } from './request.actions.js';
import type { RequestMachineContext } from './request.types.js';

type DelayArgs = { context: RequestMachineContext };

/** The request machine's waits, each computed from context (never a literal in the config). */
export const requestDelays = {
  /** The whole request's budget, armed once when the request starts: the hard time bound (rule 1). */
  requestBudget: ({ context }: DelayArgs) => timeLeftMs(context.startedAt, context.budgetMs, context.now),
  /** One attempt's timeout, clipped to the budget left. */
  attemptTimeout: ({ context }: DelayArgs) => attemptTimeoutMs(context),
  /** The planned wait before the next attempt: jittered backoff, at least the server's Retry-After. */
  backoffDelay: ({ context }: DelayArgs) => context.previousDelayMs ?? 0,
  /** The rest of a server's hold on the origin of the next attempt. */
  holdDelay: ({ context }: DelayArgs) => Math.max(0, (context.holdUntil ?? context.now) - context.now),
};
