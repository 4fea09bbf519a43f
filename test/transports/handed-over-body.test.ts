// A body handed over as a stream, alone on a simulated clock: what was read first, the idle timeout only while the
// app waits on the source, the caller's signal, and no timer left behind. The transports over real sockets are in
// streaming.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { handedOverBody } from '../../src/transports/handed-over-body.js';
import { readUpToCap } from '../../src/transports/read-up-to-cap.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (chunk: Uint8Array | undefined) => new TextDecoder().decode(chunk);

/** A source the test feeds chunk by chunk, and what became of it. */
function source() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: undefined as unknown, pulls: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => void state.pulls++,
      cancel: (reason) => void (state.cancelled = reason ?? 'cancelled'),
    },
    { highWaterMark: 0 },
  );
  return {
    reader: stream.getReader(),
    push: (chunk: string) => controller.enqueue(bytes(chunk)),
    end: () => controller.close(),
    fail: (error: unknown) => controller.error(error),
    state,
  };
}

describe('handedOverBody', () => {
  it('yields the bytes read first, then the rest, and ends with the source, leaving no timer', async () => {
    const clock = simulatedClock();
    const feed = source();
    const body = handedOverBody(feed.reader, [bytes('{"items":'), bytes('[1,2,')], {
      idleMs: 1_000,
      clock,
      signal: undefined,
      host: () => 'api.test:443',
    });
    const reading = new Response(body).text();
    feed.push('3]}');
    feed.end();
    expect(await reading).toBe('{"items":[1,2,3]}');
    expect(clock.pending()).toBe(0);
  });

  it('errors with a TimeoutError when no chunk comes within idleMs of the app asking, and cancels the source', async () => {
    const clock = simulatedClock();
    const feed = source();
    const body = handedOverBody(feed.reader, [], {
      idleMs: 1_000,
      clock,
      signal: undefined,
      host: () => 'api.test:443',
    });
    const reader = body.getReader();
    const first = reader.read();
    await clock.increment(999);
    feed.push('one');
    expect(text((await first).value)).toBe('one');
    // The timer restarts with each wait: 999 ms more is still within it.
    const second = reader.read();
    second.catch(() => undefined);
    await clock.increment(999);
    expect(feed.state.cancelled).toBeUndefined();
    await clock.increment(1);
    const error = await second.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      name: 'TimeoutError',
      message: 'no data from api.test:443 for 1000 ms while reading the response body (timeouts.idleMs)',
    });
    expect(feed.state.cancelled).toBe(error);
    expect(clock.pending()).toBe(0);
  });

  describe('where the host has no DOMException (React Native)', () => {
    afterEach(() => void vi.unstubAllGlobals());

    it('errors with a FailwiseError named TimeoutError', async () => {
      vi.stubGlobal('DOMException', undefined);
      const clock = simulatedClock();
      const feed = source();
      const body = handedOverBody(feed.reader, [], {
        idleMs: 10,
        clock,
        signal: undefined,
        host: () => 'h:1',
      });
      const reading = new Response(body).text();
      reading.catch(() => undefined);
      await clock.increment(10);
      const error: unknown = await reading.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FailwiseError);
      expect(error).toMatchObject({ name: 'TimeoutError' });
    });
  });

  it('arms no timer while the app has not asked for a chunk', async () => {
    const clock = simulatedClock();
    const feed = source();
    const body = handedOverBody(feed.reader, [bytes('read')], {
      idleMs: 1_000,
      clock,
      signal: undefined,
      host: () => 'api.test:443',
    });
    const reader = body.getReader();
    expect(text((await reader.read()).value)).toBe('read');
    await clock.increment(60_000);
    expect(clock.pending()).toBe(0);
    expect(feed.state.pulls).toBe(0);
    const next = reader.read();
    feed.push('later');
    expect(text((await next).value)).toBe('later');
    expect(clock.pending()).toBe(0);
  });

  it("errors with the caller's abort reason and cancels the source, with or without an idle limit", async () => {
    for (const idleMs of [1_000, undefined]) {
      const clock = simulatedClock();
      const feed = source();
      const controller = new AbortController();
      const body = handedOverBody(feed.reader, [], {
        idleMs,
        clock,
        signal: controller.signal,
        host: () => 'api.test:443',
      });
      const reading = new Response(body).text();
      reading.catch(() => undefined);
      const reason = new Error('left the screen');
      controller.abort(reason);
      await expect(reading).rejects.toBe(reason);
      expect(feed.state.cancelled).toBe(reason);
      expect(clock.pending()).toBe(0);
    }
  });

  it("passes on the source's error, and the app's cancel to the source", async () => {
    const clock = simulatedClock();
    const failing = source();
    const lost = new TypeError('terminated');
    const reading = new Response(
      handedOverBody(failing.reader, [], { idleMs: 1_000, clock, signal: undefined, host: () => 'h' }),
    ).text();
    reading.catch(() => undefined);
    failing.fail(lost);
    await expect(reading).rejects.toBe(lost);

    const cancelled = source();
    const body = handedOverBody(cancelled.reader, [], {
      idleMs: 1_000,
      clock,
      signal: undefined,
      host: () => 'h',
    });
    await body.cancel('done with it');
    expect(cancelled.state.cancelled).toBe('done with it');
    expect(clock.pending()).toBe(0);
  });
});

describe('readUpToCap', () => {
  const streamOf = (chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(bytes(chunk));
        controller.close();
      },
    }).getReader();

  it('reads a body that ends within the cap whole, the cap itself included', async () => {
    expect(await readUpToCap(streamOf(['abc', 'de']), 5)).toEqual({ complete: true, bytes: bytes('abcde') });
    expect(await readUpToCap(streamOf([]), 5)).toEqual({ complete: true, bytes: new Uint8Array(0) });
  });

  it('stops at the first chunk past the cap and leaves the rest in the reader', async () => {
    const reader = streamOf(['abc', 'def', 'ghi']);
    const result = await readUpToCap(reader, 5);
    expect(result.complete).toBe(false);
    expect(result.complete ? [] : result.read.map(text)).toEqual(['abc', 'def']);
    expect(text((await reader.read()).value)).toBe('ghi');
  });
});
