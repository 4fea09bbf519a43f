import type { DrillScenario } from '../drill-scenario.js';

/** Failures of the origin set and of connectivity: offline moments, failover and failback, flapping. */
export const originScenarios: readonly DrillScenario[] = [];
