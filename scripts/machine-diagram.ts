import { toDirectedGraph } from 'xstate/graph';
import type { AnyStateMachine, AnyStateNode } from 'xstate';

type Graph = ReturnType<typeof toDirectedGraph>;

/** The name of a guard as the config wrote it: `hasAttemptsLeft`, `and(isOffline, isDeferrable)`, `not(x)`. */
function guardName(guard: unknown): string {
  if (guard === undefined) return '';
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const g = guard as { check?: unknown; guards?: unknown[]; name?: string };
    if (Array.isArray(g.guards)) {
      const kind = g.check === undefined ? 'guard' : String((g.check as { name?: string }).name ?? 'guard');
      const op = /and/i.test(kind) ? 'and' : /or/i.test(kind) ? 'or' : /not/i.test(kind) ? 'not' : kind;
      return `${op}(${g.guards.map(guardName).join(', ')})`;
    }
    return g.name || 'guard';
  }
  if (typeof guard === 'object' && guard !== null && 'type' in guard)
    return String((guard as { type: string }).type);
  return 'guard';
}

/** ` [guard] / reason`: the guard that must hold, and the failure reason the transition records. */
function edgeNote(t: { guard?: unknown; actions?: readonly unknown[] }): string {
  const guard = guardName(t.guard);
  const reason = (t.actions ?? [])
    .map((a) => a as { type?: string; params?: { reason?: string } } | undefined)
    .find((a) => a?.type === 'setReason' && typeof a.params?.reason === 'string')?.params?.reason;
  return `${guard ? ` [${guard}]` : ''}${reason ? ` / ${reason}` : ''}`;
}

/** Short, readable event labels: `after attemptTimeout`, `done chooseOrigin`, `request.cancel`. */
function eventLabel(eventType: string, delays: Record<string, unknown>): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]! in delays ? after[1] : `${after[1]}ms`}`;
  const done = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (done) return `${done[1]} ${done[2]}`;
  return eventType;
}

/**
 * A Mermaid `stateDiagram-v2` of a machine, made from its own definition, with every edge labelled by
 * its event and named guard (xstate 5 has no Mermaid exporter; `toDirectedGraph` leaves out eventless
 * `always` edges, so they are added from each state node).
 */
export function toMermaid(machine: AnyStateMachine): string {
  const out = ['stateDiagram-v2'];
  const delays = (machine.implementations.delays ?? {}) as Record<string, unknown>;
  // Mermaid ids cannot hold dots; each nested state is declared with its own short name as label.
  const id = (node: AnyStateNode) => node.path.join('_') || node.id;
  const walk = (graph: Graph, depth: number) => {
    const node = graph.stateNode;
    const pad = '  '.repeat(depth);
    if (graph.children.length > 0) {
      if (node.parent) out.push(`${pad}state "${node.key}" as ${id(node)} {`);
      const initial = node.config.initial;
      if (typeof initial === 'string') out.push(`${pad}  [*] --> ${id(node.states[initial]!)}`);
      for (const child of graph.children) walk(child, depth + 1);
      if (node.parent) out.push(`${pad}}`);
    }
    if (graph.children.length === 0 && node.path.length > 1)
      out.push(`${pad}state "${node.key}" as ${id(node)}`);
    if (node.type === 'final') out.push(`${pad}${id(node)} --> [*]`);
    // A transition on the root applies in every state: drawn from each top-level state that is not final
    // (the root itself is not a state in the diagram).
    const sources = node.parent
      ? [node]
      : Object.values(node.states as Record<string, AnyStateNode>).filter((child) => child.type !== 'final');
    for (const [eventType, transitions] of node.transitions) {
      for (const t of transitions) {
        for (const target of t.target ?? []) {
          for (const source of sources) {
            if (source === target) continue;
            out.push(`${pad}${id(source)} --> ${id(target)}: ${eventLabel(eventType, delays)}${edgeNote(t)}`);
          }
        }
      }
    }
    for (const t of node.always ?? []) {
      for (const target of t.target ?? []) {
        out.push(`${pad}${id(node)} --> ${id(target)}: always${edgeNote(t)}`);
      }
    }
  };
  walk(toDirectedGraph(machine), 0);
  return out.join('\n');
}

/** Every state node below the root, depth first, in definition order. */
export function statesOf(machine: AnyStateMachine): AnyStateNode[] {
  const out: AnyStateNode[] = [];
  const visit = (node: AnyStateNode) => {
    if (node.parent) out.push(node);
    for (const child of Object.values(node.states)) visit(child as AnyStateNode);
  };
  visit(machine.root);
  return out;
}

/** A Markdown table cell: no line breaks, no bare pipes. */
export const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The `| state | kind | what it means |` table of a machine's states and their descriptions. */
export function statesTable(machine: AnyStateMachine): string[] {
  return [
    '| state | kind | what it means |',
    '| --- | --- | --- |',
    ...statesOf(machine).map(
      (node) =>
        `| \`${node.path.join('.')}\` | ${node.type === 'final' || node.type === 'parallel' ? node.type : ''} | ${cell(node.description ?? '')} |`,
    ),
  ];
}

/** A Markdown page for docs/machines/: the diagram plus a table of states and their descriptions. */
export function machinePage(title: string, machine: AnyStateMachine): string {
  return [
    `# ${title}`,
    '',
    '<!-- Generated by `npm run diagrams` from the machine definition. Do not edit by hand: a test fails when this file is stale. -->',
    '',
    '```mermaid',
    toMermaid(machine),
    '```',
    '',
    ...statesTable(machine),
    '',
  ].join('\n');
}
