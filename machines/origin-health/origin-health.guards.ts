import { evidenceAfter, isCounted, primaryOf, tripped } from './origin-health.actions.js';
import type { OriginHealthContext, OriginHealthEvent, ProbeOutput } from './origin-health.types.js';

type GuardArgs = { context: OriginHealthContext; event: OriginHealthEvent };
type ProbeArgs = { context: OriginHealthContext; event: unknown };
/** These guards read the output of the probe whose done event is being handled. */
const probeOf = (event: unknown) => (event as { output: ProbeOutput }).output;

const onPrimary = (context: OriginHealthContext, event: OriginHealthEvent) =>
  'origin' in event && event.origin === primaryOf(context);

/** The origin-health machine's named guards; each reads only context and the event. */
export const originHealthGuards = {
  /**
   * A counted failure of the primary trips a failover criterion (TLS, consecutive failures or the failure
   * ratio), and there is a backup to fail over to: with one origin there is nothing to switch to.
   */
  tripsFailover: ({ context, event }: GuardArgs) =>
    onPrimary(context, event) && context.origins.length > 1 && tripped(context, event) !== undefined,
  /** A counted failure of the primary makes `suspectAfter` in a row. */
  makesSuspect: ({ context, event }: GuardArgs) =>
    onPrimary(context, event) &&
    isCounted(context, event) &&
    context.evidence.consecutiveFailures + 1 >= context.policy.health.suspectAfter,
  /** A success of the primary makes `recoverAfter` in a row. */
  recovers: ({ context, event }: GuardArgs) =>
    onPrimary(context, event) &&
    event.type === 'attempt.succeeded' &&
    evidenceAfter(context, event).consecutiveSuccesses >= context.policy.health.recoverAfter,
  /** The probe told nothing: the device was offline (or connectivity says so). Neither success nor failure. */
  probeInconclusive: ({ context, event }: ProbeArgs) =>
    !context.online || probeOf(event).failureClass === 'offline',
  /** This successful probe makes `probeSuccesses` in a row: traffic may fail back. */
  probesSucceeded: ({ context, event }: ProbeArgs) =>
    probeOf(event).ok && context.probeSuccesses + 1 >= context.policy.health.probeSuccesses,
  probeSucceeded: ({ event }: ProbeArgs) => probeOf(event).ok,
  /** Connectivity says offline: a probe that failed then tells nothing about the origin. */
  isDeviceOffline: ({ context }: ProbeArgs) => !context.online,
};
