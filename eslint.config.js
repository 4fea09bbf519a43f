// @ts-check
import { builtinModules } from 'node:module';

import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Escapes a string for use inside a RegExp source. */
const escapeRegExp = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Node built-ins, with or without the `node:` scheme (`node:fs`, `fs`, `fs/promises`). Modules that
 * only exist with the scheme (`node:test`, `node:sqlite`) are caught by the `node:` prefix.
 */
const NODE_BUILTIN = {
  regex: `^(?:node:|(?:${builtinModules
    .filter((name) => !name.startsWith('node:'))
    .map(escapeRegExp)
    .join('|')})(?:/|$))`,
  message:
    'Node built-ins are off limits here: this layer must run unchanged in a browser. Inject what you need.',
};

/** A module path ending: a directory (`x/...`), an extension (`x.js`), or nothing (`x`). */
const END = String.raw`(?:/|\.[cm]?[jt]s$|$)`;

/** The package's own entry points pull in the runtime and transports; import the module itself instead. */
const SELF_IMPORT = {
  regex: '^failwise(?:/|$)',
  message: 'Do not import failwise from inside failwise; import the module by its relative path.',
};

/**
 * Layering: src/policy, src/engine <- machines <- src/runtime <- src/transports, src/stores.
 * A lower layer never imports a higher one, so the pure parts stay testable with a simulated clock and
 * bundle for the browser without Node built-ins.
 */
const POLICY_IMPORTS = [
  {
    regex: String.raw`^(?:\.\./)+machines${END}`,
    message: 'src/policy is the bottom layer: it may not import from machines/.',
  },
  {
    regex: String.raw`^(?:\.\./)+(?:src/)?(?:runtime|transports|stores)${END}`,
    message:
      'src/policy is the bottom layer: it may not import from src/runtime, src/transports or src/stores.',
  },
  {
    regex: String.raw`^(?:\.\./)+(?:src/)?(?:index|node|browser)${END}`,
    message: 'src/policy may not import a package entry point (it re-exports the runtime).',
  },
  SELF_IMPORT,
  NODE_BUILTIN,
];

/** The statechart engine runs any machine's table: it knows no machine, and nothing that drives one. */
const ENGINE_IMPORTS = [
  {
    regex: String.raw`^(?:\.\./)+machines${END}`,
    message:
      'src/engine runs any machine: it may not import from machines/ (the runtime passes machines in).',
  },
  {
    regex: String.raw`^(?:\.\./)+(?:src/)?(?:runtime|transports|stores|policy)${END}`,
    message: 'src/engine may not import from src/runtime, src/transports, src/stores or src/policy.',
  },
  {
    regex: String.raw`^(?:\.\./)+(?:src/)?(?:index|machines|node|browser)${END}`,
    message: 'src/engine may not import a package entry point (it re-exports the runtime).',
  },
  SELF_IMPORT,
  NODE_BUILTIN,
];

const MACHINES_IMPORTS = [
  {
    regex: String.raw`^(?:\.\./)+src/(?:runtime|transports|stores)${END}`,
    message:
      'machines/ may not import from src/runtime, src/transports or src/stores; the runtime drives machines, not the reverse.',
  },
  {
    regex: String.raw`^(?:\.\./)+src/(?:index|machines|node|browser)${END}`,
    message: 'machines/ may not import a package entry point (it re-exports the runtime).',
  },
  SELF_IMPORT,
  NODE_BUILTIN,
];

/**
 * Time and timers must come from the injected `Clock` (xstate's `clock` actor option plus `now()`), so that
 * tests can step a simulated clock. These layers may not read the wall clock or start host timers.
 */
const TIME_MESSAGE = 'Time must be injected: use the Clock (clock.now(), clock.setTimeout) or xstate delays.';
const TIMER_GLOBALS = ['setTimeout', 'setInterval', 'setImmediate', 'requestAnimationFrame'];
const PURE_TIME_RULES = {
  'no-restricted-globals': ['error', ...TIMER_GLOBALS.map((name) => ({ name, message: TIME_MESSAGE }))],
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: TIME_MESSAGE },
    { object: 'performance', property: 'now', message: TIME_MESSAGE },
    ...['globalThis', 'window', 'self', 'global'].flatMap((object) =>
      TIMER_GLOBALS.map((property) => ({ object, property, message: TIME_MESSAGE })),
    ),
  ],
  'no-restricted-syntax': [
    'error',
    {
      selector: "NewExpression[callee.name='Date'][arguments.length=0]",
      message: `\`new Date()\` reads the wall clock. ${TIME_MESSAGE}`,
    },
    {
      selector: "CallExpression[callee.name='Date']",
      message: `\`Date()\` reads the wall clock. ${TIME_MESSAGE}`,
    },
    {
      selector: 'ImportExpression[source.value=/^node:/]',
      message: NODE_BUILTIN.message,
    },
  ],
};

/**
 * Built-ins that React Native's Hermes before 0.70 lacks (Hermes 0.12: no `Array.prototype.at`, no
 * `Promise.allSettled` or `Promise.any`, no `WeakRef`): shipped code that React Native can load must not use them,
 * so that an app below the stated minimum (README, "React Native") meets no missing built-in either.
 */
const HERMES_MESSAGE = 'missing from older Hermes (React Native before 0.70); see README, "React Native"';
const HERMES_SYNTAX = [
  {
    selector:
      "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(at|findLast|findLastIndex)$/]",
    message: `\`.at()\`, \`.findLast()\` and \`.findLastIndex()\` are ${HERMES_MESSAGE}: index with \`length - 1\`.`,
  },
];
const HERMES_PROPERTIES = ['allSettled', 'any', 'withResolvers'].map((property) => ({
  object: 'Promise',
  property,
  message: `\`Promise.${property}\` is ${HERMES_MESSAGE}.`,
}));
const HERMES_GLOBALS = ['WeakRef', 'FinalizationRegistry', 'AggregateError', 'structuredClone'].map(
  (name) => ({
    name,
    message: `\`${name}\` is ${HERMES_MESSAGE}.`,
  }),
);
const HERMES_RULES = {
  'no-restricted-globals': ['error', ...HERMES_GLOBALS],
  'no-restricted-properties': ['error', ...HERMES_PROPERTIES],
  'no-restricted-syntax': ['error', ...HERMES_SYNTAX],
};

/**
 * `rules` with the Hermes entries added to its restricted globals, properties and syntax: a later config block's
 * options for a rule replace an earlier one's, so a layer with its own list must carry these too.
 */
const withHermesRules = (/** @type {Record<string, any[]>} */ rules) =>
  Object.fromEntries(
    Object.entries(HERMES_RULES).map(([rule, [level, ...entries]]) => [
      rule,
      [level, ...entries, ...(rules[rule]?.slice(1) ?? [])],
    ]),
  );

export default defineConfig(
  {
    ignores: ['dist/', 'coverage/', 'node_modules/', 'docs/', '.drill/', '.stryker-tmp/', 'reports/'],
  },

  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,

  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'all',
          argsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      'prefer-const': ['error', { destructuring: 'all' }],
    },
  },

  // Shipped code React Native can load: no built-in older Hermes lacks (the Node-only drill CLI aside).
  {
    files: ['src/**/*.ts', 'machines/**/*.ts'],
    ignores: ['src/drill/**'],
    rules: HERMES_RULES,
  },

  // Layering: the pure policy layer.
  {
    files: ['src/policy/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: POLICY_IMPORTS }],
      ...withHermesRules(PURE_TIME_RULES),
    },
  },

  // Layering: the statechart engine.
  {
    files: ['src/engine/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ENGINE_IMPORTS }] },
  },

  // Layering: the state machines.
  {
    files: ['machines/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: MACHINES_IMPORTS }],
      ...withHermesRules(PURE_TIME_RULES),
    },
  },

  // Tests only: vitest's asymmetric matchers (`expect.any()`, `expect.anything()`) are typed `any`, as is
  // `JSON.parse` of captured output, and `expect(obj.method).toBe(spy)` reads a method unbound on purpose.
  // XState's typed setup() needs none of this in machines/ or src/ (checked), so the rules stay on there.
  {
    files: ['test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Fakes of async APIs (transports, auth, reconcile) are async functions that need not await.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },

  // Plain JS (this file): not in any tsconfig, so no type-aware rules.
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
