import type { DrillScenario } from '../drill-scenario.js';
import { originScenarios } from './origin-scenarios.js';
import { requestScenarios } from './request-scenarios.js';

/** The failover test plan, in the order the drill runs it. */
export const scenarios: readonly DrillScenario[] = [...requestScenarios, ...originScenarios];
