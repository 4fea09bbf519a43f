import type { OriginHealthContext } from './origin-health.types.js';

type DelayArgs = { context: OriginHealthContext };

/** The origin-health machine's waits, each from context and policy (never a literal in the config). */
export const originHealthDelays = {
  /** The least time traffic stays failed over: `minFailedOverMs`, doubled on repeated trouble, capped. */
  failedOverTime: ({ context }: DelayArgs) => context.failedOverMs,
  probeInterval: ({ context }: DelayArgs) => context.policy.health.probeIntervalMs,
  probeTimeout: ({ context }: DelayArgs) => context.policy.health.probeTimeoutMs,
};
