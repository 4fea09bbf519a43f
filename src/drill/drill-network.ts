/**
 * The drill's network: failwise's own `nodeHttpTransport` to real 127.0.0.1 servers, watched so the drill
 * knows when the wire is quiet. Quiet means every attempt on the wire has been answered, or is one an
 * origin chose to hang; only then may simulated time move, so an answer always lands at the simulated
 * instant its request was sent, and a hang lasts exactly as long as the client's attempt timeout.
 *
 * Host names ending in `.invalid` (RFC 6761) fail to resolve, from a `lookup` of our own: a DNS failure
 * without depending on the machine's resolver. Every other name resolves to 127.0.0.1, so nothing leaves
 * the loopback interface.
 */
import type { LookupFunction } from 'node:net';
import { nodeHttpTransport } from '../transports/node-http-transport.js';
import type { Transport } from '../transports/transport.js';

const realTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Resolves every name to 127.0.0.1, except `*.invalid`, which fails as `dns.lookup` does (ENOTFOUND). */
export const loopbackLookup: LookupFunction = (hostname, options, callback) => {
  if (hostname.endsWith('.invalid')) {
    const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
      code: 'ENOTFOUND',
      errno: -3008,
      syscall: 'getaddrinfo',
      hostname,
    });
    process.nextTick(() => (callback as (error: Error) => void)(error));
    return;
  }
  if (typeof options === 'object' && options.all)
    process.nextTick(() =>
      (callback as (e: null, addresses: Array<{ address: string; family: number }>) => void)(null, [
        { address: '127.0.0.1', family: 4 },
      ]),
    );
  else process.nextTick(() => callback(null, '127.0.0.1', 4));
};

export interface DrillNetwork {
  transport: Transport;
  /** Attempts sent and not yet settled. */
  readonly onTheWire: number;
  /**
   * Resolves once the wire is quiet and promises have drained: nothing on it but requests the origins hang.
   * Throws when a request stays on the wire, unanswered and not hung, for 5 s of real time.
   */
  quiet(): Promise<void>;
  close(): Promise<void>;
}

export function drillNetwork(heldByOrigins: () => number): DrillNetwork {
  const inner = nodeHttpTransport({ lookup: loopbackLookup });
  const wire = new Set<Promise<unknown>>();
  const transport: Transport = {
    name: inner.name,
    send(request) {
      const sent = inner.send(request);
      wire.add(sent);
      const done = () => void wire.delete(sent);
      sent.then(done, done);
      return sent;
    },
    close: () => inner.close?.(),
    // The network changed (scenario network-handover): the drill's pooled connections are dropped like any.
    reset: () => inner.reset?.(),
  };
  const isQuiet = () => wire.size <= heldByOrigins();
  const quiet = async () => {
    const startedAt = Date.now();
    // Several ticks in a row: an answer read from the socket takes a few rounds to reach the machines.
    for (let calm = 0; calm < 4;) {
      await realTick();
      if (isQuiet()) calm += 1;
      else {
        calm = 0;
        if (Date.now() - startedAt > 5_000)
          throw new Error(
            'drill: a request stayed on the wire for 5 s of real time, unanswered and not hung',
          );
        await new Promise<void>((resolve) => setTimeout(resolve, 1));
      }
    }
  };
  return {
    transport,
    get onTheWire() {
      return wire.size;
    },
    quiet,
    close: async () => {
      await inner.close?.();
    },
  };
}
