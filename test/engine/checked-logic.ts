import { isDeepStrictEqual } from 'node:util';
import type { ActionImpl, MachineLogic } from '../../src/engine/machine-logic.js';

/**
 * A machine's logic, every function of it (guards, actions, delays, inputs, params, outputs) checked on each
 * call against the rules for logic authors that the types hold only one level deep (src/engine/machine-logic.ts,
 * `LogicArgs`): it changes nothing it was given, however deep, and uses nothing it was given (the arguments
 * object, the context) once it returned. The lean executor depends on both: it writes an action's changes into
 * the context in place, and hands one arguments object to several guards in turn. Each broken rule is added to
 * `broken`, named by the machine, the kind of function and its name; the call itself goes on as it would.
 *
 * The differential harness runs every machine's lean side with its logic checked, so every random run of the
 * conformance suite checks the rules too (differential-harness.ts, `expectSame`).
 */
export function checkedLogic<TLogic extends MachineLogic<never, never>>(
  machineId: string,
  logic: TLogic,
  broken: Set<string>,
): TLogic {
  const check = (kind: string, fns: Readonly<Record<string, (args: never) => unknown>>) =>
    Object.fromEntries(
      Object.entries(fns).map(([name, fn]) => [
        name,
        (args: object) => checkedCall(`${machineId}: ${kind} ${name}`, broken, args, (a) => fn(a as never)),
      ]),
    );
  return {
    ...logic,
    guards: check('guard', logic.guards),
    delays: check('delay', logic.delays),
    inputs: check('input', logic.inputs),
    params: check('params', logic.params),
    outputs: check('output', logic.outputs),
    actions: Object.fromEntries(
      Object.entries(logic.actions).map(([name, impl]) => [
        name,
        checkedAction(machineId, name, impl, broken),
      ]),
    ),
  };
}

function checkedAction(
  machineId: string,
  name: string,
  impl: ActionImpl<never>,
  broken: Set<string>,
): ActionImpl<never> {
  if (impl.kind === 'raise') return impl;
  const label = `${machineId}: ${impl.kind} action ${name}`;
  const run = impl.run as (args: object, params: never) => never;
  return {
    ...impl,
    run: (args: object, params: never) => checkedCall(label, broken, args, (a) => run(a, params)),
  };
}

/** Calls `call` with `args` watched: what it changes in them, and what it reads of them after it returned. */
function checkedCall<R>(label: string, broken: Set<string>, args: object, call: (args: object) => R): R {
  const before = copyOf(args);
  const watch = { label, broken, live: true };
  const context = (args as { context?: unknown }).context;
  const watchedContext =
    typeof context === 'object' && context !== null ? new Proxy(context, watcher(watch)) : context;
  const watchedArgs = new Proxy(args, {
    ...watcher(watch),
    get(target, key, receiver) {
      if (!watch.live) broken.add(`${label} kept its arguments and read them after it returned`);
      return key === 'context' ? watchedContext : (Reflect.get(target, key, receiver) as unknown);
    },
  });
  try {
    return call(watchedArgs);
  } finally {
    watch.live = false;
    if (!isDeepStrictEqual(copyOf(args), before)) broken.add(`${label} changed what it was given`);
  }
}

interface Watch {
  readonly label: string;
  readonly broken: Set<string>;
  live: boolean;
}

/** Traps that note any use after the call returned, and any change at all. */
function watcher(watch: Watch): ProxyHandler<object> {
  const read = () => {
    if (!watch.live) watch.broken.add(`${watch.label} kept what it was given and used it after it returned`);
  };
  const change = () => watch.broken.add(`${watch.label} changed what it was given`);
  return {
    get: (target, key, receiver) => (read(), Reflect.get(target, key, receiver) as unknown),
    has: (target, key) => (read(), Reflect.has(target, key)),
    ownKeys: (target) => (read(), Reflect.ownKeys(target)),
    getOwnPropertyDescriptor: (target, key) => (read(), Reflect.getOwnPropertyDescriptor(target, key)),
    set: (target, key, value, receiver) => (change(), Reflect.set(target, key, value, receiver)),
    defineProperty: (target, key, descriptor) => (change(), Reflect.defineProperty(target, key, descriptor)),
    deleteProperty: (target, key) => (change(), Reflect.deleteProperty(target, key)),
  };
}

/**
 * A copy of the data in `value` as it is now: plain objects, arrays, maps and sets copied all the way down;
 * anything else (functions, class instances, errors) kept as it is, compared by identity.
 */
function copyOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyOf);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, copyOf(v)]));
  if (value instanceof Set) return new Set([...value].map(copyOf));
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyOf((value as Record<string, unknown>)[key]);
  return copy;
}
