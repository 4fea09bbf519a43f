/** What run-scenarios.ts reports, and what it is given: the shape the test and the child process share. */

/** Where the scenarios run: React Native 0.87 and later, React Native 0.70 to 0.86, or Node's own fetch. */
export const SCENARIO_ENVIRONMENTS = ['react-native', 'react-native-before-0.87', 'node'] as const;
export type ScenarioEnvironment = (typeof SCENARIO_ENVIRONMENTS)[number];

export interface ScenarioServers {
  /** The primary's origin URL, http://127.0.0.1:port. */
  primary: string;
  backup: string;
  /** A port on 127.0.0.1 where nothing listens. */
  deadPort: number;
}

export interface SettledError {
  name: string;
  message: string;
  isError: boolean;
  field?: string;
  /** Whether the rejection is the aborted signal's own `reason` object. */
  isReason?: boolean;
}

export type Settled<T> = { value: T } | { error: SettledError };

export interface ScenarioFacts {
  gzipJson: Settled<unknown>[];
  healthAfterGzip: string;
  bigBody: Settled<number>;
  trickle: Settled<string>;
  streamTrue: Settled<{ bodyType: string; text: string }>;
  streamShortAttempt: Settled<{ status: string; failureClass: string | undefined; text: string | undefined }>;
  abort: Settled<Response>;
  timeoutAbort: Settled<Response>;
  requestGet: Settled<unknown>;
  requestPost: Settled<unknown>;
  formData: Settled<number>;
  autoKey: Settled<number>;
  upperCaseOrigin: Settled<unknown>;
  upperCaseUrls: string[];
  failover: Settled<{ text: string; active: string | undefined }>;
  cached: Settled<{ status: string; stale?: boolean; text?: string }[]>;
  durable: Settled<{
    queued: unknown;
    flushed: { sent: number; failed: number; pending: number };
    left: number;
  }>;
  tanstack: Settled<unknown>;
}
