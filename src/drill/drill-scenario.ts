import type { DrillContext } from './drill-harness.js';

/** One scenario of the failover test plan: what it sets up, what it expects, and how it checks. */
export interface DrillScenario {
  /** The name `--scenario` takes, e.g. `write-timeout-with-key`. */
  name: string;
  /** One line for the table. */
  title: string;
  /** The expected behaviour, in one sentence. */
  expected: string;
  /** Sets up origins and clients, runs the requests, and records checks with `drill.check`. */
  run(drill: DrillContext): Promise<void>;
}
