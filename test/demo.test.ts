import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('npm start (the demo)', () => {
  it('runs every scenario against a real loopback origin, passes them all and exits 0', () => {
    const script = fileURLToPath(new URL('../scripts/demo.ts', import.meta.url));
    const result = spawnSync(process.execPath, ['--import', 'tsx', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('all 5 scenarios passed');
    expect(result.stdout).not.toContain('FAIL');
  });
});
