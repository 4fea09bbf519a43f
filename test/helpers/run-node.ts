import { spawn } from 'node:child_process';

export interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Whether it was still running after `limitMs` and was killed. */
  killed: boolean;
}

/** Runs `node --import tsx ...args` in a fresh process; kills it (SIGKILL) if it has not exited after `limitMs`. */
export function runNode(args: readonly string[], limitMs: number): Promise<NodeRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const guard = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr, killed });
    });
  });
}
