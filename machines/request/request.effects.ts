import { MachineError } from '../../src/errors/machine-error.js';
import type {
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryOutput,
  ReconcileOutput,
} from './request.types.js';

/**
 * What the request machine's actors do when whoever runs it provides none, as plain functions:
 * request.actors.ts wraps them for XState, and the lean runtime calls them directly.
 */
export const requestEffectDefaults = {
  /** The transport must be provided. */
  transport: (): never => {
    throw new MachineError(
      'requestMachine: provide a `transport` actor with requestMachine.provide({ actors })',
    );
  },
  /** Takes the first origin, passing over those a retried read avoids when another is left. */
  chooseOrigin: (input: ChooseOriginInput): ChooseOriginOutput => ({
    origin: input.origins.find((origin) => !(input.avoid ?? []).includes(origin)) ?? input.origins[0],
  }),
  /** Grants every retry. */
  claimRetry: (): ClaimRetryOutput => ({ granted: true }),
  /** Fails: no auth configured. */
  refreshAuth: (): never => {
    throw new MachineError('requestMachine: no `refreshAuth` actor provided');
  },
  /** Cannot tell. */
  reconcile: (): ReconcileOutput => ({ status: 'unknown' }),
};
