import type { DrillScenario } from '../drill-scenario.js';
import { cachedReadOutage } from './cached-read-outage.js';
import { failoverFailback } from './failover-failback.js';
import { flappingPrimary } from './flapping-primary.js';
import { networkHandover } from './network-handover.js';
import { offlineDuringSync } from './offline-during-sync.js';
import { offlineInFlight } from './offline-in-flight.js';
import { primaryDiesUnderLoad } from './primary-dies-under-load.js';
import { readsOnlyBackupWrite } from './reads-only-backup-write.js';
import { sentWhileAppClosed } from './sent-while-app-closed.js';

/**
 * Failures of the origin set and of connectivity: offline moments, a network switch, failover and failback, a primary
 * that dies with reads in flight, flapping, durable work sent by a background runtime while the app is closed,
 * reading from the cache while the origin is down.
 */
export const originScenarios: readonly DrillScenario[] = [
  offlineInFlight,
  networkHandover,
  offlineDuringSync,
  sentWhileAppClosed,
  failoverFailback,
  primaryDiesUnderLoad,
  flappingPrimary,
  readsOnlyBackupWrite,
  cachedReadOutage,
];
