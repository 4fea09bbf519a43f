import { primaryOf } from './origin-health.actions.js';
import type { OriginHealthContext, ProbeInput, ProbeOutput } from './origin-health.types.js';

/**
 * The origin-health machine's invocation inputs and the parameters its actions take from the event or the
 * context, named so that both runners call the same functions and the derived table can refer to them.
 */
type Args = { context: OriginHealthContext; event: unknown };
const probeOf = (event: unknown) => (event as { output: ProbeOutput }).output;

export const originHealthInputs = {
  probe: ({ context }: Args): ProbeInput => ({ origin: primaryOf(context) }),
};

export const originHealthParams = {
  /** The probe's result. */
  probeOutput: ({ event }: Args): ProbeOutput => probeOf(event),
  /** The probe's result, counted as no success: it told nothing (the device was offline). */
  inconclusiveProbe: ({ event }: Args): ProbeOutput => ({ ...probeOf(event), ok: false }),
  /** How long `failedOver` lasted when its timer fired. */
  failedOverTime: ({ context }: Args) => ({ ms: context.failedOverMs }),
  probeTimeout: ({ context }: Args) => ({ ms: context.policy.health.probeTimeoutMs }),
  probeInterval: ({ context }: Args) => ({ ms: context.policy.health.probeIntervalMs }),
};
