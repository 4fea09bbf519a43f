// The `failwise/otel` entry: OpenTelemetry spans and metrics for the client's `telemetry` option
// (docs/telemetry.md), over the optional peer @opentelemetry/api. Nothing else imports it, so an app that does
// not use it bundles none of it.
export { openTelemetry, DURATION_BUCKETS } from './otel/open-telemetry.js';
export type { OpenTelemetryOptions } from './otel/open-telemetry.js';
export type {
  Telemetry,
  TelemetryClient,
  TelemetryEnd,
  TelemetryNote,
  TelemetryRequest,
  TelemetryRun,
  TelemetrySession,
} from './runtime/telemetry.js';
