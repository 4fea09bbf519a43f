// The `failwise/machines` entry: the XState v5 machines, to embed without the client (docs/embedding.md),
// and `withInspector`, which makes a client run them as XState actors for the Stately inspector (docs/inspect.md).
export { withInspector, xstateRunner } from './runtime/with-inspector.js';
export type { InspectionObserver } from './runtime/with-inspector.js';
export { requestMachine } from '../machines/request/request.machine.js';
export type {
  AttemptInput,
  AttemptOutput,
  ChooseOriginInput,
  ChooseOriginOutput,
  ClaimRetryInput,
  ClaimRetryOutput,
  ReconcileInput,
  ReconcileOutput,
  RefreshAuthInput,
  RefreshAuthOutput,
  RequestMachineContext,
  RequestMachineEmitted,
  RequestMachineEvent,
  RequestMachineInput,
  RequestMachineOutput,
} from '../machines/request/request.types.js';

export { originHealthMachine } from '../machines/origin-health/origin-health.machine.js';
export { healthStateOf } from './policy/health-state.js';
export { selectOrigin } from './policy/select-origin.js';
export type {
  HealthChanged,
  HealthOrigin,
  HealthState,
  OriginHealthContext,
  OriginHealthEvent,
  OriginHealthInput,
  ProbeInput,
  ProbeOutput,
} from '../machines/origin-health/origin-health.types.js';
export { commitEntryActor, outboxMachine, sendEntryActor } from '../machines/outbox/outbox.machine.js';
export type { OutboxActorOptions } from '../machines/outbox/outbox.machine.js';
export { entryRecordOf } from '../machines/outbox/outbox.replies.js';
export type {
  AcquireLeaseInput,
  AcquireLeaseOutput,
  CommitEntryInput,
  CommitOutcome,
  LoadEntriesOutput,
  OutboxCommit,
  OutboxEntryRecord,
  OutboxEntryStatus,
  OutboxEntrySummary,
  OutboxMachineContext,
  OutboxMachineEmitted,
  OutboxMachineEvent,
  OutboxMachineInput,
  SendEntryInput,
  SendResult,
} from '../machines/outbox/outbox.types.js';
