import { and, not, type AnyStateMachine } from 'xstate';
import { FailwiseError } from '../errors/failwise-error.js';
import type { MachineLogic } from './machine-logic.js';
import {
  afterEvent,
  type ActionRow,
  type GuardRow,
  type InvokeRow,
  type MachineTable,
  type StateRow,
  type TransitionRow,
} from './machine-table.js';

/**
 * Reads an XState machine into the table the lean executor follows (src/engine/machine-table.ts). It accepts
 * exactly the XState features failwise's machines use, listed in docs/design.md, and throws a
 * `TableDerivationError` naming the state and the feature for anything else: a table that silently left a
 * feature out would run a different machine. Every function the machine refers to must be one of `logic`'s,
 * found by identity, so that both runners call the same code.
 */
export function deriveTable(machine: AnyStateMachine, logic: MachineLogic<never, never>): MachineTable {
  return new Deriver(machine, logic).table();
}

export class TableDerivationError extends FailwiseError {
  override name = 'TableDerivationError';
}

/** The XState state node fields the derivation reads (public properties of `machine.root` and its states). */
interface Node {
  id: string;
  key: string;
  type: string;
  parent?: Node | undefined;
  states: Record<string, Node>;
  config: Record<string, unknown>;
  initial?: { target: readonly Node[] } | undefined;
  transitions: Map<string, readonly FormattedTransition[]>;
  always?: readonly FormattedTransition[] | undefined;
  output?: unknown;
}

interface FormattedTransition {
  target?: readonly Node[] | undefined;
  guard?: unknown;
  actions: readonly unknown[];
  reenter: boolean;
  [key: string]: unknown;
}

const STATE_KEYS = new Set([
  'id',
  'type',
  'initial',
  'states',
  'on',
  'always',
  'after',
  'entry',
  'exit',
  'invoke',
  'description',
  'output',
  // the root's (setup() adds `schemas`, undefined unless given)
  'context',
  'schemas',
]);
const TRANSITION_KEYS = new Set([
  'target',
  'guard',
  'actions',
  'reenter',
  'description',
  // added by XState when it formats a transition
  'source',
  'eventType',
  'toJSON',
  'event',
  'delay',
]);
const INVOKE_KEYS = new Set(['id', 'src', 'input', 'onDone', 'onError']);
const AND_CHECK = (and([]) as unknown as { check: unknown }).check;
const NOT_CHECK = (not('x') as unknown as { check: unknown }).check;

class Deriver {
  private readonly nodes: Node[] = [];
  private readonly index = new Map<Node, number>();

  constructor(
    private readonly machine: AnyStateMachine,
    private readonly logic: MachineLogic<never, never>,
  ) {
    const visit = (node: Node) => {
      this.index.set(node, this.nodes.length);
      this.nodes.push(node);
      for (const child of Object.values(node.states)) visit(child);
    };
    visit(machine.root as unknown as Node);
  }

  table(): MachineTable {
    // The lean executor keeps the configuration as the bits of one 32-bit integer.
    if (this.nodes.length > 31)
      this.refuse(this.nodes[0]!, `it has ${this.nodes.length} states; at most 31 are supported`);
    const config = this.machine.config as Record<string, unknown>;
    if (config.context !== this.logic.context)
      this.refuse(this.nodes[0]!, 'its context must be the logic’s `context` function');
    const output = this.nodes[0]!.config.output;
    return {
      id: this.machine.id,
      states: this.nodes.map((node) => this.state(node)),
      ...(output === undefined ? {} : { output: this.named(this.logic.outputs, output, 'output') }),
    };
  }

  private state(node: Node): StateRow {
    for (const [key, value] of Object.entries(node.config))
      if (!STATE_KEYS.has(key) || (key === 'schemas' && value !== undefined))
        this.refuse(node, `the state field \`${key}\` is not supported`);
    if (node.parent !== undefined && (node.config.id !== undefined || node.config.context !== undefined))
      this.refuse(node, 'a custom state id or context below the root is not supported');
    const type = node.type;
    if (type !== 'atomic' && type !== 'compound' && type !== 'parallel' && type !== 'final')
      this.refuse(node, `the state type \`${type}\` is not supported`);
    if (type === 'final' && node.parent?.parent !== undefined)
      this.refuse(node, 'a final state is supported only as a child of the root (it ends the machine)');
    if (typeof node.config.initial === 'object')
      this.refuse(node, 'an initial transition with actions is not supported');
    const after = this.after(node);
    const afterEvents = new Set(after.map((delay) => afterEvent(delay, node.id)));
    const on: Record<string, TransitionRow[]> = {};
    for (const [eventType, transitions] of node.transitions) {
      if (eventType.includes('*')) this.refuse(node, `the wildcard event \`${eventType}\` is not supported`);
      if (eventType.startsWith('xstate.') && !this.isOwnEvent(node, eventType, afterEvents))
        this.refuse(node, `the event \`${eventType}\` is not supported`);
      on[eventType] = transitions.map((t) => this.transition(node, t));
    }
    const output = node.config.output;
    if (output !== undefined && type !== 'final' && node.parent !== undefined)
      this.refuse(node, 'only a final state (or the machine) may have an output');
    const initial = node.initial?.target[0];
    // What the executor works out (the id, the children, timer events) is left out; see machine-table.ts.
    return {
      key: node.key,
      ...(type === 'atomic' ? {} : { type }),
      parent: node.parent ? this.index.get(node.parent)! : -1,
      ...(type === 'compound' && initial ? { initial: this.index.get(initial)! } : {}),
      ...nonEmpty('entry', this.actions(node, node.config.entry)),
      ...nonEmpty('exit', this.actions(node, node.config.exit)),
      ...nonEmpty('invoke', this.invocations(node)),
      ...nonEmpty('after', after),
      ...(Object.keys(on).length > 0 ? { on } : {}),
      ...nonEmpty(
        'always',
        (node.always ?? []).map((t) => this.transition(node, t)),
      ),
      ...(output === undefined || node.parent === undefined
        ? {}
        : { output: this.named(this.logic.outputs, output, 'output', node) }),
    };
  }

  /** Timers and the replies of the state's own invocations are the only `xstate.*` events it may handle. */
  private isOwnEvent(node: Node, eventType: string, afterEvents: Set<string>): boolean {
    if (afterEvents.has(eventType)) return true;
    const ids = toArray(node.config.invoke).map((i) => String((i as { id?: unknown }).id));
    return ids.some(
      (id) => eventType === `xstate.done.actor.${id}` || eventType === `xstate.error.actor.${id}`,
    );
  }

  /** The state's timers: their delay names. */
  private after(node: Node): string[] {
    const config = node.config.after as Record<string, unknown> | undefined;
    if (config === undefined) return [];
    return Object.keys(config).map((delay) => {
      if (!(delay in this.logic.delays))
        this.refuse(node, `the delay \`${delay}\` must be a named delay of the logic (no literal delays)`);
      return delay;
    });
  }

  private invocations(node: Node): InvokeRow[] {
    return toArray(node.config.invoke).map((raw) => {
      const invoke = raw as Record<string, unknown>;
      for (const key of Object.keys(invoke))
        if (!INVOKE_KEYS.has(key)) this.refuse(node, `the invoke field \`${key}\` is not supported`);
      if (typeof invoke.id !== 'string') this.refuse(node, 'an invocation needs an explicit `id`');
      if (typeof invoke.src !== 'string') this.refuse(node, 'an invocation’s `src` must be an actor’s name');
      const src = invoke.src;
      if (!(src in (this.machine.implementations.actors ?? {})))
        this.refuse(node, `the actor \`${src}\` is not one of the machine’s actors`);
      return {
        id: invoke.id,
        src,
        ...(invoke.input === undefined
          ? {}
          : { input: this.named(this.logic.inputs, invoke.input, 'input', node) }),
      };
    });
  }

  private transition(node: Node, t: FormattedTransition): TransitionRow {
    for (const key of Object.keys(t))
      if (!TRANSITION_KEYS.has(key)) this.refuse(node, `the transition field \`${key}\` is not supported`);
    const targets = t.target?.map((target) => this.index.get(target)!);
    return {
      ...(targets?.length ? { targets } : {}),
      ...(t.guard === undefined ? {} : { guard: this.guard(node, t.guard) }),
      ...nonEmpty('actions', this.actions(node, t.actions)),
      ...(t.reenter ? { reenter: true as const } : {}),
    };
  }

  private guard(node: Node, guard: unknown): GuardRow {
    if (typeof guard === 'string') {
      if (!(guard in this.logic.guards))
        this.refuse(node, `the guard \`${guard}\` is not a named guard of the logic`);
      return guard;
    }
    const combinator = guard as { check?: unknown; guards?: unknown[] };
    if (typeof guard === 'function' && combinator.check === AND_CHECK)
      return { and: combinator.guards!.map((g) => this.guard(node, g)) };
    if (typeof guard === 'function' && combinator.check === NOT_CHECK)
      return { not: this.guard(node, combinator.guards![0]) };
    return this.refuse(node, 'a guard must be a named guard, `and([...])` or `not(...)` (no inline guards)');
  }

  private actions(node: Node, raw: unknown): ActionRow[] {
    return toArray(raw).map((action) => {
      if (typeof action === 'string') return this.action(node, action, undefined);
      if (
        typeof action === 'object' &&
        action !== null &&
        typeof (action as { type?: unknown }).type === 'string'
      ) {
        const { type, params, ...rest } = action as { type: string; params?: unknown };
        if (Object.keys(rest).length > 0)
          this.refuse(node, `the action \`${type}\` has fields other than params`);
        return this.action(node, type, params);
      }
      return this.refuse(node, 'an action must be named (no inline or built-in actions in the config)');
    });
  }

  private action(node: Node, name: string, params: unknown): ActionRow {
    if (!(name in this.logic.actions))
      this.refuse(node, `the action \`${name}\` is not a named action of the logic`);
    if (params === undefined) return name;
    if (typeof params === 'function')
      return { name, params: { from: this.named(this.logic.params, params, 'params', node) } };
    if (JSON.stringify(params) === undefined || !sameJson(params))
      this.refuse(node, `the params of \`${name}\` must be plain data or a named params function`);
    return { name, params: { value: params } };
  }

  /** The name under which `registry` holds exactly this function. */
  private named(registry: Record<string, unknown>, fn: unknown, what: string, node = this.nodes[0]!): string {
    const name = Object.keys(registry).find((key) => registry[key] === fn);
    return name ?? this.refuse(node, `its ${what} function must be one of the logic’s named ${what}s`);
  }

  private refuse(node: Node, why: string): never {
    throw new TableDerivationError(`machine ${this.machine.id}, state ${node.id}: ${why}`);
  }
}

/** `{ [key]: list }`, or nothing for an empty list. */
function nonEmpty<K extends string, T>(key: K, list: readonly T[]): { [P in K]?: readonly T[] } {
  return (list.length > 0 ? { [key]: list } : {}) as { [P in K]?: readonly T[] };
}

function toArray(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Plain data survives a JSON round trip unchanged. */
function sameJson(value: unknown): boolean {
  const text = JSON.stringify(value);
  return JSON.stringify(JSON.parse(text)) === text && !containsFunction(value);
}

function containsFunction(value: unknown): boolean {
  if (typeof value === 'function') return true;
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some(containsFunction);
}
