/**
 * What the success and retry sections measure, shared by `npm run bench` (bench/peers.ts, on Node) and
 * `npm run bench:hermes` (bench/hermes/script.ts, on a Hermes VM), so that their figures are of the same
 * work: the in-process server, the hand-written loop and the cockatiel policies. Nothing here may need
 * Node: it is bundled for Hermes, where `Response` and `setTimeout` are the host's.
 */
import {
  ConsecutiveBreaker,
  TimeoutStrategy,
  circuitBreaker,
  handleAll,
  retry,
  timeout,
  wrap,
} from 'cockatiel';

import type { PeerId } from './report.js';
import type { Peer } from './rounds.js';

/** How long a server that answers after a wait (`waited`, bench/compare.ts) takes, on a real timer. */
export const WAIT_MS = 2;

/** The statuses every peer retries: failwise's default `retryableStatuses`. */
export const RETRYABLE = new Set([408, 429, 502, 503, 504]);

/** What the in-process server does: see `sender`. */
export type Script = 'ok' | 'flaky' | 'waited';

/**
 * An in-process server: `ok` answers every send with a 204; `flaky` answers 503, then 204, then 503 ...
 * Every peer awaits each call before the next, and each call makes exactly two sends, so each call's
 * first send is the 503; `check` proves it by counting. `waited` answers every send with a 204 after a real
 * `WAIT_MS` timer, as a server across a network does: the process sleeps between a call's start and its end.
 */
export function sender(script: Script) {
  let sends = 0;
  return {
    send: (): Promise<Response> => {
      const first = sends++ % 2 === 0;
      if (script === 'waited')
        return new Promise((resolve) =>
          setTimeout(() => resolve(new Response(null, { status: 204 })), WAIT_MS),
        );
      return Promise.resolve(new Response(null, { status: script === 'flaky' && first ? 503 : 204 }));
    },
    sends: () => sends,
    reset: () => void (sends = 0),
  };
}

class RetryableStatus extends Error {
  constructor(readonly response: Response) {
    super(`status ${response.status}`);
  }
}

/** Throws for a retryable status, since cockatiel's `handleAll` and p-retry retry on errors. */
export async function throwIfRetryable(send: () => Promise<Response>): Promise<Response> {
  const response = await send();
  if (RETRYABLE.has(response.status)) throw new RetryableStatus(response);
  return response;
}

/** What a careful app writes by hand: 3 attempts, retry on a retryable status or an error, 0 ms apart. */
export async function handLoop(send: () => Promise<Response>, attempts = 3): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await send();
      if (!RETRYABLE.has(response.status) || attempt >= attempts) return response;
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/** Issue 10's cockatiel policy: 2 retries (3 attempts), a breaker, and a 10 s aggressive timeout per attempt. */
export const cockatielWithTimeout = () =>
  wrap(
    retry(handleAll, { maxAttempts: 2 }),
    circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
    timeout(10_000, TimeoutStrategy.Aggressive),
  );
export const cockatielNoTimeout = () =>
  wrap(
    retry(handleAll, { maxAttempts: 2 }),
    circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
  );

/** What a peer's call ends with: a `Response`, or failwise's outcome. */
type CallResult = Response | { status: string; response?: Response };

const statusOf = (result: CallResult): number =>
  result instanceof Response ? result.status : result.status === 'succeeded' ? result.response!.status : 0;

/** The peers every engine runs, each made over its own sender's `send`. */
export const commonMakers = {
  handLoop: (send: () => Promise<Response>) => () => handLoop(send),
  cockatiel: (send: () => Promise<Response>) => {
    const policy = cockatielWithTimeout();
    return () => policy.execute(() => throwIfRetryable(send));
  },
  cockatielNoTimeout: (send: () => Promise<Response>) => {
    const policy = cockatielNoTimeout();
    return () => policy.execute(() => throwIfRetryable(send));
  },
};

/** failwise's client options in these sections: one origin, no wait between attempts, `send` as its transport. */
export function failwiseOptions<C>(send: () => Promise<Response>, clock: C) {
  return {
    origins: [{ id: 'primary', url: 'https://api.example.test' }],
    clock,
    transport: { name: 'bench', send: async () => ({ kind: 'response' as const, response: await send() }) },
    policy: { backoff: { initialMs: 0, maxMs: 0 } },
  };
}

/**
 * A peer over its own sender for `script`, made by `make`; its check throws unless every call since the last
 * reset made the sends it must (one, two when `flaky`) and ended in the 204.
 */
export function checkedPeer(
  id: PeerId,
  script: Script,
  make: (send: () => Promise<Response>) => () => Promise<unknown>,
): Peer {
  const sendsPerCall = script === 'flaky' ? 2 : 1;
  const server = sender(script);
  const run = make(server.send);
  let wrong = 0;
  return {
    id,
    call: async () => {
      if (statusOf((await run()) as CallResult) !== 204) wrong++;
    },
    reset: () => {
      server.reset();
      wrong = 0;
    },
    check: (calls) => {
      if (wrong > 0 || server.sends() !== calls * sendsPerCall)
        throw new Error(
          `bench: ${id} made ${server.sends()} sends for ${calls} calls (expected ${calls * sendsPerCall}), ${wrong} not a 204`,
        );
    },
  };
}
