import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('../fixtures/close-and-exit.ts', import.meta.url));

/** Runs the fixture in a fresh Node process; resolves with its exit code and output, or kills it after `limitMs`. */
function runChild(
  transport: string,
  limitMs: number,
  ...extra: string[]
): Promise<{ code: number | null; stdout: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, transport, ...extra], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let killed = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const guard = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, killed });
    });
  });
}

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
