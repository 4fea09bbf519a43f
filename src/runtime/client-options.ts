import type { InspectionEvent, Observer } from 'xstate';
import type { Clock } from '../clock/clock.js';
import type { Failure } from '../policy/failure.js';
import type { Policy, PolicyInput } from '../policy/policy.js';
import type { Transport } from '../transports/transport.js';
import type { AuthProvider } from './auth-coordinator.js';
import type { DecisionEvent } from './decision-events.js';

/** One API origin: where requests go. The first is the primary. */
export interface OriginConfig {
  /** A short name used in outcomes and decision events, e.g. `primary`. Unique. */
  id: string;
  /** The origin's base URL, `https:` unless `allowInsecure`; request paths are joined to it. */
  url: string;
  /**
   * Allows an `http:` URL (CONTRACT rule 8): for loopback development servers, never for production.
   * @default false
   */
  allowInsecure?: boolean;
  /**
   * Whether `auth` headers go to this origin (CONTRACT rule 8): `omit` for a third-party backup that must
   * never see your tokens.
   * @default 'send'
   */
  credentials?: 'send' | 'omit';
}

/** The request as the `reconcile` hook sees it. */
export interface ReconcileRequest {
  requestId: string;
  method: string;
  /** The full URL the write went to. */
  url: string;
  origin: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  idempotencyKey?: string | undefined;
}

export type ReconcileResult =
  { status: 'applied'; response?: Response } | { status: 'not-applied' } | { status: 'unknown' };

/** Asks the server what became of a write whose outcome is unknown (CONTRACT rule 2). */
export type ReconcileHook = (args: {
  request: ReconcileRequest;
  failure: Failure;
  attempts: number;
}) => Promise<ReconcileResult>;

export interface FailoverClientOptions {
  origins: readonly OriginConfig[];
  /** Any part of a policy; the rest comes from the documented defaults (docs/policy.md). */
  policy?: PolicyInput | Policy;
  /** @default fetchTransport() */
  transport?: Transport;
  /** @default systemClock */
  clock?: Clock;
  auth?: AuthProvider;
  reconcile?: ReconcileHook;
  /** Receives every decision, redacted (CONTRACT rule 9). An exception thrown here is ignored. */
  onEvent?: (event: DecisionEvent) => void;
  /** An XState inspection observer, e.g. `createBrowserInspector().inspect` (docs/inspect.md). */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Randomness for backoff jitter, in [0, 1). @default Math.random */
  random?: () => number;
  /** Makes keys for `idempotencyKey: 'auto'`. @default crypto.randomUUID */
  generateIdempotencyKey?: () => string;
}
