import type { MachineLogic } from './machine-logic.js';
import type { MachineTable } from './machine-table.js';
import { LeanActor, type ChildMachine } from './lean-actor.js';

/**
 * A machine that another one starts as a child (`MachineDefinition.machines`: the outbox's `outboxEntry`), for
 * the lean executor: it runs in a lean actor of its own, with its parent's actors and timers, and sends its
 * parent events (`sendParent`); a child that fails sends its parent `xstate.error.actor.<id>`, as an XState
 * child does. Stopping it (its parent does) stops it and its children.
 */
export function childMachine<TContext, TInput>(
  table: MachineTable,
  logic: MachineLogic<TContext, TInput>,
): ChildMachine {
  return {
    table,
    logic: logic as unknown as MachineLogic<unknown, unknown>,
    start(id, input, parent, machine) {
      let children = running.get(parent);
      if (children === undefined) running.set(parent, (children = new Map<string, LeanActor<unknown>>()));
      const child: LeanActor<unknown> = new LeanActor(
        { ...machine, table, logic: logic as unknown as MachineLogic<unknown, unknown> },
        input,
        {
          ended(end) {
            if (children.get(id) === child) children.delete(id);
            if (end.status === 'error') parent.send({ type: `xstate.error.actor.${id}`, error: end.error });
          },
        },
        parent,
      );
      children.set(id, child);
      return child.start();
    },
  };
}

/** The child machines each parent runs now, by id, in the order they were started. */
const running = new WeakMap<LeanActor<unknown>, Map<string, LeanActor<unknown>>>();

/** The child machines `parent` runs now (stopped or failed ones left out), in the order they were started. */
export function runningChildMachines(parent: LeanActor<never, never> | LeanActor<unknown>) {
  const children = running.get(parent as LeanActor<unknown>) ?? new Map<string, LeanActor<unknown>>();
  return [...children].map(([id, actor]) => ({ id, actor }));
}
