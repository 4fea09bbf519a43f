// What the docs recipes tests share: each ```ts block of a docs/recipes.md section as written, a type-check of
// blocks against failwise's sources (as bundlers or Node resolve them), the published types of the third-party
// modules they import (the members they use), and an exact-once swap of what a test substitutes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, expect } from 'vitest';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(root, 'docs/recipes.md'), 'utf8');

/** Every ```ts block of the `## heading` section (up to the next `## ` heading). */
export function blocks(heading: string): string[] {
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/recipes.md has no "## ${heading}" section`);
  const rest = doc.slice(start + heading.length + 5);
  const section = rest.slice(0, rest.search(/\n## /) >>> 0);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** Just enough of the third-party packages' types for the recipes: the members they use, as published. */
export const declarations = `
declare module '@tanstack/react-query' {
  export type QueryKey = readonly unknown[];
  export interface QueryFunctionContext { queryKey: QueryKey; signal: AbortSignal }
  export interface DefaultOptions { queries?: { retry?: boolean | number }; mutations?: { retry?: boolean | number } }
  export class QueryClient {
    constructor(config?: { defaultOptions?: DefaultOptions });
    invalidateQueries(filters?: { queryKey?: QueryKey }): Promise<void>;
  }
  export interface UseQueryResult<T> { data: T | undefined; error: Error | null; isPending: boolean }
  export function useQuery<T>(options: {
    queryKey: QueryKey;
    queryFn: (context: QueryFunctionContext) => T | Promise<T>;
    retry?: boolean | number;
  }): UseQueryResult<T>;
  export interface UseMutationResult<T, V> { mutate(variables: V): void; mutateAsync(variables: V): Promise<T> }
  export function useMutation<T, V>(options: { mutationFn: (variables: V) => Promise<T> }): UseMutationResult<T, V>;
}
declare module '@react-native-community/netinfo' {
  export interface NetInfoState {
    type: string;
    isConnected: boolean | null;
    isInternetReachable: boolean | null;
  }
  const NetInfo: {
    addEventListener(listener: (state: NetInfoState) => void): () => void;
    refresh(): Promise<NetInfoState>;
  };
  export default NetInfo;
}
declare module 'react-native' {
  export type AppStateStatus = 'active' | 'background' | 'inactive' | 'unknown' | 'extension';
  export interface NativeEventSubscription { remove(): void }
  export const AppState: {
    currentState: AppStateStatus;
    addEventListener(type: 'change', listener: (state: AppStateStatus) => void): NativeEventSubscription;
  };
}
declare module '@react-native-async-storage/async-storage' {
  const AsyncStorage: {
    getItem(key: string): Promise<string | null>;
    setItem(key: string, value: string): Promise<void>;
    removeItem(key: string): Promise<void>;
  };
  export default AsyncStorage;
}
declare module 'react-native-random-uuid';
`;

/**
 * Type-checks `files` (virtual, as if in test/docs/) with tsconfig.json's options, `failwise` mapped to
 * `failwiseEntry` and `failwise/*` to src/; `bundler` switches to the module resolution of Vite and Metro.
 * Returns the errors, one line each, and the files the program loaded.
 */
export function typeCheck(files: Record<string, string>, failwiseEntry: string, bundler = false) {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const compilerOptions: ts.CompilerOptions = {
    ...options,
    noEmit: true,
    ...(bundler ? { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler } : {}),
    // As users import them; the sources rather than dist/, which may be stale.
    paths: { failwise: [join(root, failwiseEntry)], 'failwise/*': [join(root, 'src/*.ts')] },
  };
  const virtual = new Map(Object.entries(files).map(([name, text]) => [join(root, 'test/docs', name), text]));
  const host = ts.createCompilerHost(compilerOptions);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (path) => virtual.has(path) || fileExists.call(host, path);
  host.readFile = (path) => virtual.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, languageVersion, ...rest) => {
    const text = virtual.get(path);
    return text === undefined
      ? getSourceFile.call(host, path, languageVersion, ...rest)
      : ts.createSourceFile(path, text, languageVersion);
  };
  const program = ts.createProgram([...virtual.keys()], compilerOptions, host);
  const errors = [...virtual.keys()].flatMap((path) => {
    const file = program.getSourceFile(path)!;
    return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => {
      const { line } = file.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${basename(path)}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  });
  const loaded = program.getSourceFiles().map((file) => file.fileName);
  return { errors, loaded };
}

/** Swaps `from` for `to`, which must occur exactly once in `code`. */
export function swap(code: string, from: string, to: string): string {
  expect(code.split(from), `the recipe should contain ${from} once`).toHaveLength(2);
  return code.replace(from, to);
}

/**
 * A folder for copies of docs code as modules, in test/docs/ so that `failwise` resolves as in every test
 * (`.readme-*` is git-ignored), made before the file's tests and removed after them. `write` writes `code` as a
 * new module there and returns its path; `file` gives the path of a file of that name there.
 */
export function recipeModules(prefix: string): { write(code: string): string; file(name: string): string } {
  let dir = '';
  let copies = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(root, 'test/docs', `.readme-${prefix}-`));
  });
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });
  const file = (name: string) => join(dir, name);
  return {
    write(code) {
      const path = file(`recipe-${++copies}.ts`);
      writeFileSync(path, code);
      return path;
    },
    file,
  };
}
