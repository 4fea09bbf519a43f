import { fromPromise } from 'xstate';
import { MachineError } from '../../src/errors/machine-error.js';
import type { ProbeInput, ProbeOutput } from './origin-health.types.js';

/**
 * The origin-health machine's one effect. Whoever runs the machine provides it with
 * `originHealthMachine.provide({ actors: { probe } })`; the failwise runtime sends `policy`'s probe request
 * (or calls the app's probe function). It gets an AbortSignal that fires when the probe times out.
 */
export const originHealthActors = {
  /**
   * Checks the primary once; resolves `{ ok, at }` (also when it failed: a rejection carries no time). The
   * default fails: without a probe, traffic never fails back.
   */
  probe: fromPromise<ProbeOutput, ProbeInput>(() =>
    Promise.reject(
      new MachineError(
        'originHealthMachine: provide a `probe` actor with originHealthMachine.provide({ actors })',
      ),
    ),
  ),
};
