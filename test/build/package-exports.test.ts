import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  mkdirSync,
  copyFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// What `npm install failwise` gives an app: the build (tsc, as `npm run build` runs it) resolved through
// package.json's `exports`, each entry with its types, imported by a real Node process.

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  dependencies: Record<string, string>;
  sideEffects: boolean;
  type: string;
  engines: { node: string };
};
const work = mkdtempSync(join(tmpdir(), 'failwise-pkg-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every file path the exports map names, whatever the condition. */
const targets = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : Object.values(value as Record<string, unknown>).flatMap(targets);

describe('the published package', () => {
  const installed = join(work, 'node_modules', 'failwise');
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(root, 'tsconfig.build.json'),
      '--outDir',
      join(installed, 'dist'),
    ],
    { cwd: root },
  );
  copyFileSync(join(root, 'package.json'), join(installed, 'package.json'));
  for (const dependency of Object.keys(pkg.dependencies)) {
    symlinkSync(join(root, 'node_modules', dependency), join(work, 'node_modules', dependency));
  }
  // The optional peer an app installs to use failwise/otel.
  mkdirSync(join(work, 'node_modules', '@opentelemetry'));
  symlinkSync(
    join(root, 'node_modules', '@opentelemetry/api'),
    join(work, 'node_modules', '@opentelemetry/api'),
  );
  mkdirSync(join(work, 'app'));

  it('is ESM, side-effect free, for Node >= 20, with xstate and zod as its only dependencies', () => {
    expect(pkg.type).toBe('module');
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.engines.node).toBe('>=20');
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['xstate', 'zod']);
  });

  it('takes @opentelemetry/api 1 as an optional peer, for failwise/otel only', () => {
    const { peerDependencies, peerDependenciesMeta } = pkg as unknown as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(peerDependencies['@opentelemetry/api']).toMatch(/^\^1\./);
    expect(peerDependenciesMeta['@opentelemetry/api']).toEqual({ optional: true });
  });

  it('takes @tanstack/query-core 5 as an optional peer, for failwise/tanstack-query only', () => {
    const { peerDependencies, peerDependenciesMeta } = pkg as unknown as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(peerDependencies['@tanstack/query-core']).toBe('^5');
    expect(peerDependenciesMeta['@tanstack/query-core']).toEqual({ optional: true });
  });

  it('takes pg 8 as an optional peer, for postgresStore only', () => {
    const { peerDependencies, peerDependenciesMeta } = pkg as unknown as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(peerDependencies['pg']).toBe('^8');
    expect(peerDependenciesMeta['pg']).toEqual({ optional: true });
  });

  it('has a built file for every path in its exports map, types included', () => {
    const paths = Object.entries(pkg.exports).flatMap(([, value]) => targets(value));
    expect(paths.filter((path) => path.endsWith('.d.ts')).length).toBeGreaterThanOrEqual(5);
    for (const path of paths) expect(existsSync(join(installed, path)), path).toBe(true);
  });

  it('imports each entry by its public name in a Node process', () => {
    const script = `
      const names = async (id) => Object.keys(await import(id)).sort().join(',');
      console.log(JSON.stringify({
        root: await names('failwise'), machines: await names('failwise/machines'),
        node: await names('failwise/node'), browser: await names('failwise/browser'),
        otel: await names('failwise/otel'), tanstackQuery: await names('failwise/tanstack-query'),
        reactNative: await names('failwise/react-native'),
        serviceWorker: await names('failwise/service-worker'),
        fetchTransport: (await import('failwise')).fetchTransport.name,
      }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(work, 'app'),
      encoding: 'utf8',
    });
    const entries = JSON.parse(out) as Record<string, string>;
    for (const name of [
      'createFailoverClient',
      'definePolicy',
      'fetchTransport',
      'simulatedClock',
      'systemClock',
      'PolicyError',
      'RequestError',
      'RequestFailedError',
      'memoryStore',
      'memoryCache',
      'manualConnectivity',
    ]) {
      expect(entries['root']?.split(',')).toContain(name);
    }
    expect(entries['machines']).toBe(
      'commitEntryActor,entryRecordOf,healthStateOf,originHealthMachine,outboxMachine,requestMachine,selectOrigin,sendEntryActor,withInspector,xstateRunner',
    );
    expect(entries['node']).toBe('nodeHttpTransport,postgresStore,sqliteStore');
    expect(entries['browser']).toBe('browserConnectivity,fetchTransport,indexedDbStore');
    expect(entries['otel']).toBe('DURATION_BUCKETS,openTelemetry');
    // It works on the objects the app passes in: no import of @tanstack/query-core, which is not installed here.
    expect(entries['tanstackQuery']).toBe('metaPolicy,queryDefaults,syncOnlineManager');
    // It takes the app's NetInfo and AsyncStorage or MMKV as arguments: none of them is imported.
    expect(entries['reactNative']).toBe('keyValueStore,netInfoConnectivity');
    expect(entries['serviceWorker']).toBe(
      'OUTBOX_SYNC_TAG,SERVICE_WORKER_DRAIN_LIMIT_MS,serviceWorkerOutbox',
    );
    // Under Node the root entry's fetchTransport reads undici's error codes (the `node` export condition).
    expect(entries['fetchTransport']).toBe('undiciFetchTransport');
  });

  it('type-checks in a Node project without the DOM lib, and in a browser project with it (no skipLibCheck)', () => {
    // What an app on Node compiles with: ES2022 and @types/node only. Every entry's .d.ts must compile there,
    // so none may name a DOM-only type (HeadersInit, RequestCredentials, IDBFactory...).
    mkdirSync(join(work, 'node_modules', '@types'), { recursive: true });
    symlinkSync(join(root, 'node_modules', '@types/node'), join(work, 'node_modules', '@types/node'));
    const consumer = (name: string, lib: string[], source: string) => {
      const dir = join(work, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            lib,
            types: ['node'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
          },
          files: ['app.ts'],
        }),
      );
      writeFileSync(join(dir, 'app.ts'), source);
      try {
        execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
          cwd: dir,
          encoding: 'utf8',
        });
      } catch (error) {
        // tsc prints its diagnostics on stdout.
        throw new Error(`${name}: ${(error as { stdout?: string }).stdout ?? String(error)}`, {
          cause: error,
        });
      }
    };
    const everyEntry = `
      import * as root from 'failwise';
      import * as machines from 'failwise/machines';
      import * as node from 'failwise/node';
      import * as browser from 'failwise/browser';
      import * as otel from 'failwise/otel';
      import * as tanstackQuery from 'failwise/tanstack-query';
      import * as reactNative from 'failwise/react-native';
      import * as serviceWorker from 'failwise/service-worker';
      export const entries = [root, machines, node, browser, otel, tanstackQuery, reactNative, serviceWorker];

      const client = root.createFailoverClient({ origins: [{ id: 'primary', url: 'https://api.example.com' }] });
      export const outcome: Promise<root.Outcome> = client.request({
        path: '/v1/items',
        headers: { accept: 'application/json' },
        fetchOptions: { credentials: 'include', cache: 'no-store', referrerPolicy: 'no-referrer' },
      });
      export const response: Promise<Response> = client.fetch('/v1/items', { headers: [['accept', 'text/plain']] });
      export const store = node.sqliteStore(':memory:');
    `;
    consumer('node-app', ['ES2022'], everyEntry);
    consumer(
      'browser-app',
      ['ES2022', 'DOM', 'DOM.Iterable'],
      `${everyEntry}
      // With the DOM lib, the store takes the host's own IndexedDB and Web Locks.
      export const inBrowser = browser.indexedDbStore('outbox', { indexedDB, locks: navigator.locks });
      const init: RequestInit = { credentials: 'same-origin', mode: 'cors', redirect: 'follow' };
      export const fetched = client.fetch('/v1/items', init);
      `,
    );
    // A service worker's script, compiled with the WebWorker lib: its own \`self\` is what serviceWorkerOutbox takes.
    consumer(
      'worker-app',
      ['ES2022', 'WebWorker'],
      `
      import { serviceWorkerOutbox } from 'failwise/service-worker';
      import { indexedDbStore } from 'failwise/browser';
      declare const self: ServiceWorkerGlobalScope;
      export const outbox = serviceWorkerOutbox(self, {
        origins: [{ id: 'primary', url: 'https://api.example.com' }],
        store: indexedDbStore('outbox'),
        timeLimitMs: 60_000,
      });
      `,
    );
  }, 60_000);

  it('ships the failwise-drill command: it runs a scenario from the build, with no dev dependency', () => {
    const bin = (pkg as unknown as { bin: Record<string, string> }).bin['failwise-drill'];
    expect(bin).toBe('./dist/src/drill/bin.js');
    const command = join(installed, bin!);
    expect(readFileSync(command, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    const list = execFileSync(process.execPath, [command, '--list'], {
      cwd: join(work, 'app'),
      encoding: 'utf8',
    });
    expect(list).toMatch(/^response-timeout\s/m);
    const run = execFileSync(process.execPath, [command, '--scenario', 'response-timeout', '--no-report'], {
      cwd: join(work, 'app'),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(run).toContain('1 scenario: 1 passed, 0 failed');
  });
});
