import type { OriginHealthContext } from './origin-health.types.js';

type DelayArgs = { context: OriginHealthContext };

/** The origin-health machine's waits, each from context and policy (never a literal in the config). */
export const originHealthDelays = {
  /** The failed-over time in force: the failover dwell (`minFailedOverMs`, doubled on flapping), or the wait after a failed probe. */
  failedOverTime: ({ context }: DelayArgs) => context.failedOverMs,
  probeInterval: ({ context }: DelayArgs) => context.policy.health.probeIntervalMs,
  probeTimeout: ({ context }: DelayArgs) => context.policy.health.probeTimeoutMs,
};
