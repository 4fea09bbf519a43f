import { requestEffectDefaults } from '../../machines/request/request.io.js';
import { requestLogic } from '../../machines/request/request.logic.js';
import { requestTable } from '../../machines/request/request.table.js';
import type { RequestMachineContext, RequestMachineInput } from '../../machines/request/request.types.js';
import type { Clock } from '../clock/clock.js';
import type { MachineRunner, PreparedMachine } from '../engine/machine-runner.js';

const requestDefinition = { table: requestTable, logic: requestLogic };
/** The client's origin choice and retry-budget claim answer at once (request-effects.ts). */
const ANSWER_AT_ONCE: ReadonlySet<string> = new Set(['chooseOrigin', 'claimRetry']);
const ANSWERED = ['transport', 'chooseOrigin', 'claimRetry'] as const;
/** The attempt reads its origin, number and timeout from the machine's context: no input object per attempt. */
const READS_CONTEXT: ReadonlySet<string> = new Set(['transport']);

/**
 * Readies the request machine for one client's runs, through the client's runner (the lean executor, or XState
 * when inspected): the one place that prepares it. Each run answers its machine's effects itself (its
 * `RequestRun`'s methods of the actors' names); `refreshAuth` and `reconcile` only when the client has auth or a
 * reconcile hook, else the machine's own defaults answer.
 */
export function prepareRequestMachine(
  runner: MachineRunner,
  clock: Clock,
  has: { auth: boolean; reconcile: boolean },
): PreparedMachine<RequestMachineContext, RequestMachineInput> {
  const runEffects = new Set<string>(ANSWERED);
  if (has.auth) runEffects.add('refreshAuth');
  if (has.reconcile) runEffects.add('reconcile');
  return runner.prepare(requestDefinition, {
    clock,
    actors: requestEffectDefaults,
    ignoresSignal: ANSWER_AT_ONCE,
    runEffects,
    contextInputs: READS_CONTEXT,
  });
}
