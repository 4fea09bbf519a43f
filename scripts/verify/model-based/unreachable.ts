/**
 * Transitions of the tables that no run of the real client can take, each with why (checked in
 * src/runtime). They are live in the machines that failwise/machines exports, whose users provide their own
 * actors and input, and the exhaustive exploration takes each of them with direct events (`npm run verify`,
 * "table transitions"); through `createFailoverClient` they are dead code. The model-based test fails if one
 * of them is ever taken (then this list is wrong) as well as if any other transition is not.
 */
export const unreachableThroughClient: Readonly<Record<string, string>> = {
  'request: request.active.choosingOrigin xstate.error.actor.chooseOrigin #0':
    "the client's chooseOrigin is selectOrigin over the health machine's context (request-effects.ts, src/policy/attempt-origin.ts), a pure function that returns an origin id or none: it never throws",
  'request: request.active.claimingRetry xstate.error.actor.claimRetry #0':
    "the client's claimRetry is retrySlots.claim (retry-slots.ts), a count of a Set: it never throws",
  'request: request.active.claimingRetrySlot xstate.error.actor.claimRetry #0':
    'as above: retrySlots.claim never throws',
  'request: request.active.givingUp always #0':
    'the client starts every request machine with `deferrable: false` (request-run.ts): durable work is deferred by the outbox runner, not by the request machine, so `givingUp` never goes to `deferred` (and the `deferred` final state is never entered through the client)',
  'originHealth: originHealth.probingFailback.probing xstate.error.actor.probe #0':
    "the client's probe (probe.ts, createProbe) never rejects: it answers `offline` while offline and turns a rejection of the transport or of the app's probe function into `ok: false`",
  'originHealth: originHealth.probingFailback.probing xstate.error.actor.probe #1':
    'as above: createProbe never rejects',
};
