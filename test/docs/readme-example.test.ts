import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The README's example must work as pasted: it is extracted verbatim and run, with only the network
// replaced (the default fetchTransport calls globalThis.fetch, stubbed here to play the API).

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

describe('the README example', () => {
  const dir = mkdtempSync(join(new URL('.', import.meta.url).pathname, '.readme-'));
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('is at most 10 lines and runs as pasted: it retries a 503 and prints the created order', async () => {
    expect(example.trim().split('\n').length).toBeLessThanOrEqual(10);
    const seen: { url: string; key: string | null }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      seen.push({ url, key: new Headers(init.headers).get('idempotency-key') });
      return seen.length === 1
        ? new Response('busy', { status: 503, headers: { 'retry-after': '0' } })
        : new Response('{"id":42}', { status: 201, headers: { 'content-type': 'application/json' } });
    });
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    // Full jitter with random() = 0 waits 0 ms: the retry happens without a real sleep.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const file = join(dir, 'example.ts');
    writeFileSync(file, example);
    try {
      await import(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(log).toHaveBeenCalledWith({ id: 42 });
    expect(seen.map((s) => s.url)).toEqual([
      'https://api.example.com/v1/orders',
      'https://api.example.com/v1/orders',
    ]);
    expect(seen[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]?.key).toBe(seen[0]?.key);
  });
});
