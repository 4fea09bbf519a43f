import type { DrillScenario } from '../drill-scenario.js';
import { responseTimeout } from './response-timeout.js';

/** Failures one request meets: transport faults, unknown write outcomes, auth, overload. */
export const requestScenarios: readonly DrillScenario[] = [responseTimeout];
