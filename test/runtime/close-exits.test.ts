import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runNode } from '../helpers/run-node.js';

const fixture = fileURLToPath(new URL('../fixtures/close-and-exit.ts', import.meta.url));

/** Runs the fixture in a fresh Node process; resolves with its exit code and output, or kills it after `limitMs`. */
const runChild = (transport: string, limitMs: number, ...extra: string[]) =>
  runNode([fixture, transport, ...extra], limitMs);

describe('client.close()', () => {
  it.each(['node', 'fetch'])(
    'lets a Node process exit by itself with requests waiting and in flight (%s transport)',
    async (transport) => {
      // The fixture's client holds a 20 s backoff timer and a hanging socket; only close() can free them.
      const result = await runChild(transport, 10_000);
      expect(result.killed).toBe(false);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout.trim())).toEqual(['cancelled', 'cancelled']);
    },
  );

  it('lets a Node process exit by itself when its store never answers, a durable write waiting for it', async () => {
    // Every store call hangs, close() included: close() waits for each at most 1 s, then the process exits.
    const result = await runChild('node', 15_000, 'stuck-store');
    expect(result.killed).toBe(false);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout.trim())).toEqual(['cancelled', 'cancelled', 'cancelled']);
  });
});
