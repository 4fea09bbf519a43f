import type { SendResult } from '../../machines/outbox/outbox.types.js';
import type { RequestMachineOutput } from '../../machines/request/request.types.js';
import type { Failure } from '../policy/failure.js';
import { isWrite } from '../policy/methods.js';
import { isMendable } from '../policy/mendable.js';
import type { RequestPolicyInput } from '../policy/request-policy.js';
import type { OutboxEntry } from '../stores/outbox-store.js';
import type { PreparedRequest } from './prepare-request.js';

/** A request run's output, as the client gets it: never `deferred` (the outbox decides that). */
export type RunOutput = Exclude<RequestMachineOutput, { status: 'deferred' }>;

/** The outbox entry of a durable request, written before its first attempt (rule 10). */
export function entryOf(prepared: PreparedRequest, id: string, now: number): OutboxEntry {
  const { method, path, headers, body, idempotent, orderKey, replaceKey, idempotencyKey, policy } = prepared;
  return {
    id,
    createdAt: now,
    // The request's own policy as plain data (checked already): every send of the entry runs by it.
    request:
      policy === undefined
        ? { method, path, headers, body, idempotent }
        : {
            method,
            path,
            headers,
            body,
            idempotent,
            policy: JSON.parse(JSON.stringify(policy)) as RequestPolicyInput,
          },
    // prepareRequest gives every durable request a key.
    idempotencyKey: idempotencyKey!,
    orderKey,
    ...(replaceKey === undefined ? {} : { replaceKey }),
    attempts: 0,
    nextAttemptAt: now,
    failures: [],
    status: 'pending',
  };
}

/** A stored entry as a request to run again. */
export function preparedOf(entry: OutboxEntry): PreparedRequest {
  const { method, path, headers, body, idempotent, policy } = entry.request;
  return {
    lifetime: 'durable',
    method,
    path,
    headers,
    body,
    idempotent,
    orderKey: entry.orderKey,
    replaceKey: entry.replaceKey,
    write: isWrite(method, idempotent),
    idempotencyKey: entry.idempotencyKey,
    // An entry stored without a policy of its own has none: its route's and the client's apply.
    policy,
  };
}

/**
 * What the outbox learns from one send. A send that ended because a server hold on its origin outlasted its
 * budget is deferred to the hold's end (`now` is the clock's time at the send's end): the hold counts
 * as the Retry-After it came from.
 */
export function sendResultOf(
  output: RunOutput,
  origin: string,
  failures: readonly Failure[] = [],
  now?: number,
): SendResult {
  if (output.status === 'succeeded') return { result: 'sent' };
  const holdMs =
    output.holdUntil !== undefined && now !== undefined ? Math.max(0, output.holdUntil - now) : undefined;
  const failure: Failure = output.failure ?? {
    class: output.reason === 'offline' ? 'offline' : 'unexpected',
    requestSent: 'no',
    origin: output.origin ?? origin,
    message: `ended ${output.reason} before an attempt`,
    ...(holdMs === undefined ? {} : { retryAfterMs: holdMs }),
  };
  return {
    result: 'failed',
    failure,
    failures: failures.length ? failures : [failure],
    retryAfterMs: holdMs === undefined ? failure.retryAfterMs : Math.max(failure.retryAfterMs ?? 0, holdMs),
    attempts: Math.max(1, output.attempts),
    retryable: isMendable(output.reason),
    endedOffline: output.reason === 'offline',
  };
}
