/**
 * Runs one scenario in a harness of its own and turns what was recorded into its report: the verdict, what
 * the policy decided, what the origins saw, and the timeline the HTML report draws.
 */
import type { DrillScenario } from './drill-scenario.js';
import {
  createDrillHarness,
  outcomeLabel,
  type DrillHarnessOptions,
  type DrillRecording,
} from './drill-harness.js';
import type {
  ScenarioReport,
  ScenarioTimeline,
  TimelineAttempt,
  TimelineHealthBand,
  TimelineWait,
} from './drill-report.js';

export async function runScenario(
  scenario: DrillScenario,
  options: DrillHarnessOptions = {},
): Promise<ScenarioReport> {
  const realStart = performance.now();
  const { context, recording, finish } = createDrillHarness(options);
  let error: string | undefined;
  try {
    await scenario.run(context);
  } catch (thrown) {
    error = thrown instanceof Error ? thrown.message : String(thrown);
  }
  const durationMs = recording.elapsed();
  await finish();
  if (recording.checks.length === 0 && error === undefined) error = 'the scenario checked nothing';
  const timeline = timelineOf(recording, durationMs);
  const verdict = error === undefined && recording.checks.every((check) => check.pass) ? 'pass' : 'fail';
  return {
    name: scenario.name,
    title: scenario.title,
    expected: scenario.expected,
    verdict,
    checks: recording.checks,
    ...(error === undefined ? {} : { error }),
    decided: {
      requests: recording.outcomes.length,
      attempts: timeline.attempts.length,
      waitsMs: timeline.waits.map((wait) => wait.to - wait.from),
      origins: [...new Set(timeline.attempts.map((attempt) => attempt.origin))],
      outcomes: recording.outcomes.map(outcomeLabel),
    },
    seen: [
      ...recording.origins.map((origin) => ({
        origin: origin.id,
        requests: origin.served.length,
        probes: origin.served.filter((served) => served.probe).length,
        writesApplied: origin.writesApplied,
      })),
      ...recording.silentOrigins.map((origin) => ({ origin, requests: 0, probes: 0, writesApplied: 0 })),
    ],
    timeline,
    realMs: Math.round(performance.now() - realStart),
  };
}

function timelineOf(recording: DrillRecording, durationMs: number): ScenarioTimeline {
  const { events } = recording;
  const attempts: TimelineAttempt[] = [];
  const waits: TimelineWait[] = [];
  const open = new Map<string, TimelineAttempt>();
  const health: TimelineHealthBand[] = [];
  // Traffic starts on the first origin the client tried, which may have no server behind it (dns, refused).
  const firstOrigin =
    events.find((event) => event.type === 'attempt-started')?.origin ?? recording.origins[0]?.id ?? '';
  for (const event of events) {
    const key = 'requestId' in event && 'attempt' in event ? `${event.requestId}#${event.attempt}` : '';
    switch (event.type) {
      case 'attempt-started': {
        const attempt: TimelineAttempt = {
          requestId: event.requestId,
          origin: event.origin,
          method: event.method,
          path: event.path,
          attempt: event.attempt,
          startAt: event.at,
          endAt: durationMs,
          result: 'unfinished',
        };
        attempts.push(attempt);
        open.set(key, attempt);
        break;
      }
      case 'attempt-failed':
      case 'succeeded':
      case 'failed': {
        const attempt = open.get(key);
        if (!attempt) break;
        open.delete(key);
        attempt.endAt = event.at;
        attempt.result =
          event.type === 'succeeded'
            ? 'ok'
            : `${event.failureClass ?? event.reason ?? 'failed'}${'status' in event && event.status !== undefined ? ` ${event.status}` : ''}`;
        break;
      }
      case 'retry-scheduled':
        waits.push({
          requestId: event.requestId,
          origin: event.origin,
          from: event.at,
          to: event.at + (event.delayMs ?? 0),
          ...(event.retryAfterMs === undefined ? {} : { retryAfterMs: event.retryAfterMs }),
        });
        break;
      case 'waiting-for-hold':
        // A wait for another request's server hold, drawn as waits are.
        waits.push({ requestId: event.requestId, origin: event.origin, from: event.at, to: event.holdUntil });
        break;
      case 'health-changed': {
        const last = health.at(-1);
        if (last) last.to = event.at;
        else health.push({ state: event.from, activeOrigin: firstOrigin, from: 0, to: event.at });
        // No origin can take traffic: the band names none.
        health.push({ state: event.to, activeOrigin: event.origin ?? '', from: event.at, to: durationMs });
        break;
      }
      default:
        break;
    }
  }
  if (health.length === 0 && recording.origins.length > 0)
    health.push({ state: 'healthy', activeOrigin: firstOrigin, from: 0, to: durationMs });
  return {
    durationMs,
    origins: [
      ...new Set([
        ...recording.origins.map((origin) => origin.id),
        ...recording.silentOrigins,
        ...attempts.map((attempt) => attempt.origin),
      ]),
    ],
    attempts,
    health,
    waits,
    served: recording.origins.flatMap((origin) =>
      origin.served.map(({ origin: id, at, method, path, reply, applied, probe }) => ({
        origin: id,
        at,
        method,
        // The report is shared like a log: no query string in it either (rule 9).
        path: path.split('?')[0]!,
        reply,
        applied,
        probe,
      })),
    ),
    events: recording.events,
    marks: recording.marks,
  };
}
