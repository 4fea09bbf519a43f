// The lint rules that keep built-ins older Hermes lacks (React Native before 0.70) out of shipped code: every
// layer's config, whose own lists of restricted globals, properties and syntax would otherwise replace them,
// carries them. Reads ESLint's computed config per file; lints nothing.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function restricted(file: string) {
  const config = (await eslint.calculateConfigForFile(file)) as { rules: Record<string, unknown[]> };
  const entries = (rule: string) =>
    (config.rules[rule] ?? []).slice(1) as Record<string, string | undefined>[];
  return {
    properties: entries('no-restricted-properties').map((entry) => `${entry.object}.${entry.property}`),
    globals: entries('no-restricted-globals').map((entry) => entry.name),
    syntax: entries('no-restricted-syntax').map((entry) => entry.selector),
  };
}

describe('built-ins older Hermes lacks', () => {
  it.each([
    'src/runtime/create-failover-client.ts',
    'src/policy/failure-window.ts',
    'src/stores/postgres-store.ts',
    'machines/request/request.logic.ts',
  ])('are refused in %s, with what the layer refuses besides', async (file) => {
    const { properties, globals, syntax } = await restricted(file);
    expect(properties).toEqual(expect.arrayContaining(['Promise.allSettled', 'Promise.any']));
    expect(globals).toEqual(expect.arrayContaining(['WeakRef', 'structuredClone']));
    expect(syntax.some((selector) => selector?.includes('findLast') && selector.includes('at'))).toBe(true);
    if (file.startsWith('machines/') || file.startsWith('src/policy/'))
      expect(properties).toContain('Date.now');
  });

  it('are not refused in the Node-only drill CLI', async () => {
    const { properties } = await restricted('src/drill/drill-harness.ts');
    expect(properties).not.toContain('Promise.allSettled');
  });
});
