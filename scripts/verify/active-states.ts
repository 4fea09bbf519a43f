import type { MachineTable } from '../../src/engine/machine-table.js';

/** The indices of the table's states that a state value (XState's shape) makes active, the root included. */
export function activeStates(table: MachineTable, value: unknown): number[] {
  const active: number[] = [];
  const visit = (index: number, sub: unknown) => {
    active.push(index);
    const child = (key: string) => table.states.findIndex((s) => s.parent === index && s.key === key);
    if (typeof sub === 'string') active.push(child(sub));
    else if (typeof sub === 'object' && sub !== null)
      for (const [key, inner] of Object.entries(sub)) visit(child(key), inner);
  };
  visit(0, value);
  return active;
}

/** The event types (not timers or actor replies) that some active state has transitions for. */
export function handledEvents(table: MachineTable, value: unknown): string[] {
  const types = new Set<string>();
  for (const index of activeStates(table, value))
    for (const type of Object.keys(table.states[index]?.on ?? {}))
      if (!type.startsWith('xstate.')) types.add(type);
  return [...types].sort();
}
