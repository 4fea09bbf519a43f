/*
 * Every error failwise throws is a FailwiseError subclass whose message names the function and the field,
 * option or call at fault. Two halves: a scan of the library's sources, so that a future
 * `throw new Error(` or `new TypeError(` fails here, and each error site that replaced a plain error, called
 * with the bad input, its class and message written out.
 *
 * The scan covers src/ and machines/, except src/drill: the drill is a command-line tool, and its simulated
 * network makes errors that imitate the host's own (`getaddrinfo ENOTFOUND`) on purpose.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { MachineError } from '../../src/errors/machine-error.js';
import { StateError } from '../../src/errors/state-error.js';
import { isFailwiseError } from '../../src/errors/type-guards.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';
import { memoryCache } from '../../src/cache/memory-cache.js';
import { memoryStore } from '../../src/stores/memory-store.js';
import { xstateRunner } from '../../src/runtime/with-inspector.js';
import { requestEffectDefaults } from '../../machines/request/request.io.js';
import { originHealthMachine } from '../../machines/origin-health/origin-health.machine.js';
import { definePolicy } from '../../src/policy/define-policy.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { scriptedTransport, respond } from '../helpers/scripted-transport.js';
import { makeEntry } from '../stores/store-contract.js';

const root = join(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === join('src', 'drill') ? [] : sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Constructions of the host's own error classes, and classes built on them. */
const PLAIN =
  /\bnew (Error|TypeError|RangeError|SyntaxError|ReferenceError|URIError|EvalError|AggregateError)\(/;
const EXTENDS_PLAIN = /\bextends (Error|TypeError|RangeError|SyntaxError)\b/;
/** `throw 'x'`, `throw \`x\``, `reject('x')`: a string is not even an Error. */
const THROWN_STRING = /\b(throw|reject\()\s*['"`]/;

/**
 * The one plain Error allowed: fetch's own `AbortError` where the host has no `DOMException` (React Native). It
 * stands for the host's error, as a `DOMException` does elsewhere, not for one of failwise's.
 */
const isHostAbortError = (file: string, line: string) =>
  file === join('src', 'errors', 'abort-error.ts') &&
  line.includes("new Error(message), { name: 'AbortError' }");

describe('the sources', () => {
  const files = [...sources('src'), ...sources('machines')];

  it('are found (the scan would pass vacuously on an empty list)', () => {
    expect(files).toContain(join('src', 'runtime', 'prepare-request.ts'));
    expect(files).toContain(join('machines', 'request', 'request.io.ts'));
    expect(files.some((file) => file.startsWith(join('src', 'drill')))).toBe(false);
  });

  it('make no plain Error, TypeError or RangeError, and throw no strings', () => {
    const found = files.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => {
          const plain =
            (PLAIN.test(line) && !isHostAbortError(file, line)) ||
            THROWN_STRING.test(line) ||
            (EXTENDS_PLAIN.test(line) && !line.includes('class FailwiseError extends Error'));
          return plain ? [`${relative(root, join(root, file))}:${i + 1}: ${line.trim()}`] : [];
        }),
    );
    expect(found).toEqual([]);
  });

  it('are checked by a scan that does find a plain error', () => {
    expect(PLAIN.test("throw new Error('x')")).toBe(true);
    expect(PLAIN.test('reject(new TypeError(`x`))')).toBe(true);
    expect(EXTENDS_PLAIN.test('export class X extends Error {')).toBe(true);
    expect(THROWN_STRING.test("throw 'x'")).toBe(true);
    expect(PLAIN.test('throw new FailwiseError(`x`)')).toBe(false);
  });
});

/** What `fn` threw or rejected with. */
async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('each error site that made a plain error', () => {
  it.each<[string, () => unknown, abstract new (...args: never[]) => FailwiseError, string]>([
    [
      'a store given a bad entry',
      () => memoryStore().add({ ...makeEntry('a'), attempts: -1 }),
      ArgumentError,
      'memoryStore.add: entry.attempts: expected an integer >= 0 (got -1)',
    ],
    [
      'a store given an empty id',
      () => memoryStore().remove(''),
      ArgumentError,
      'memoryStore.remove: id: expected a non-empty string (got "")',
    ],
    [
      'a store given a bad lease owner',
      () => memoryStore().acquireLease('', 1000, 0),
      ArgumentError,
      'memoryStore.acquireLease: owner: expected a non-empty string (got "")',
    ],
    [
      'memoryCache given maxEntries 0',
      () => memoryCache({ maxEntries: 0 }),
      ArgumentError,
      'memoryCache: options.maxEntries: expected an integer >= 1, got 0',
    ],
    [
      'manualConnectivity given an unknown hint',
      () => manualConnectivity().set('maybe' as 'online'),
      ArgumentError,
      'manualConnectivity.set: hint: expected "online", "offline" or "changed", got "maybe"',
    ],
    [
      'manualConnectivity started in an unknown state',
      () => manualConnectivity('maybe' as 'online'),
      ArgumentError,
      'manualConnectivity: initial: expected "online", "offline" or "unknown", got "maybe"',
    ],
    [
      'simulatedClock started at NaN',
      () => simulatedClock({ startAt: Number.NaN }),
      ArgumentError,
      'simulatedClock: options.startAt: expected a finite number, got NaN',
    ],
    [
      'simulatedClock moved back',
      () => simulatedClock({ startAt: 10 }).set(5),
      ArgumentError,
      'simulatedClock: set(time): cannot move back in time (now 10, asked 5)',
    ],
    [
      'the request machine run without a transport',
      () => requestEffectDefaults.transport(),
      MachineError,
      'requestMachine: provide a `transport` actor with requestMachine.provide({ actors })',
    ],
    [
      'the request machine asked to refresh auth without a refreshAuth actor',
      () => requestEffectDefaults.refreshAuth(),
      MachineError,
      'requestMachine: no `refreshAuth` actor provided',
    ],
    [
      'the XState runner given a machine it does not know',
      () =>
        xstateRunner().prepare(
          { table: { id: 'nope' } } as unknown as Parameters<ReturnType<typeof xstateRunner>['prepare']>[0],
          { actors: {} } as unknown as Parameters<ReturnType<typeof xstateRunner>['prepare']>[1],
        ),
      MachineError,
      'xstateRunner: no machine with id nope',
    ],
  ])('%s', async (_, fn, cls, message) => {
    const error = await caught(fn);
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(FailwiseError);
    expect(isFailwiseError(error)).toBe(true);
    expect((error as Error).message).toBe(message);
  });

  it('the origin-health machine probing without a probe actor fails with a MachineError', async () => {
    const clock = simulatedClock();
    const policy = definePolicy({ health: { minFailedOverMs: 10, maxFailedOverMs: 10 } });
    const errors: unknown[] = [];
    const actor = createActor(originHealthMachine, {
      input: {
        origins: [
          { id: 'primary', accepts: 'all' },
          { id: 'backup', accepts: 'all' },
        ],
        policy,
        now: 0,
      },
      clock,
      inspect: (event) => {
        if (event.type === '@xstate.event' && event.event.type.startsWith('xstate.error.actor'))
          errors.push((event.event as { error?: unknown }).error);
      },
    });
    actor.start();
    actor.send({ type: 'attempt.failed', origin: 'primary', failureClass: 'tls', at: 0 });
    await clock.increment(10);
    await clock.increment(0);
    expect(errors[0]).toBeInstanceOf(MachineError);
    expect((errors[0] as Error).message).toBe(
      'originHealthMachine: provide a `probe` actor with originHealthMachine.provide({ actors })',
    );
    actor.stop();
  });

  it("a closed client's outbox rejects with a StateError naming the call", async () => {
    const clock = simulatedClock();
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport: scriptedTransport(clock, [{ reply: respond(200) }]),
    });
    await client.close();
    const error = await caught(() => client.outbox.flush());
    expect(error).toBeInstanceOf(StateError);
    expect((error as Error).message).toBe('failwise outbox: flush() was called after close()');
  });
});
