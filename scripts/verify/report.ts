import type { Exploration } from './explore.js';

/** The verdict of one exploration: the checks it ran, and what failed. */
export const verdictOf = (e: Exploration): string =>
  e.violations.length === 0 ? 'ok' : `FAIL (${[...new Set(e.violations.map((v) => v.check))].join(', ')})`;

/** One line per machine: states, transitions, longest path, table coverage and the verdict. */
export function reportTable(explorations: readonly Exploration[]): string {
  const rows = [
    [
      'machine',
      'inputs',
      'states',
      'transitions',
      'longest path',
      'table states',
      'table transitions',
      'verdict',
    ],
    ...explorations.flatMap((e) => [
      [
        e.machine,
        String(e.inputs),
        String(e.states),
        String(e.transitions),
        String(e.longestPath),
        `${e.tableStates.total - e.tableStates.unreachable.length}/${e.tableStates.total}`,
        `${e.tableTransitions.total - e.tableTransitions.neverTaken.length}/${e.tableTransitions.total}`,
        verdictOf(e),
      ],
      // A machine it starts as a child (each entry's lifecycle): its states and transitions, in the same search.
      ...e.children.map((c) => [
        `  and its ${c.machine}`,
        '',
        '',
        '',
        '',
        `${c.tableStates.total - c.tableStates.unreachable.length}/${c.tableStates.total}`,
        `${c.tableTransitions.total - c.tableTransitions.neverTaken.length}/${c.tableTransitions.total}`,
        '',
      ]),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

/** Every violation with its path, and every table transition no path took. */
export function reportDetails(explorations: readonly Exploration[]): string {
  const lines: string[] = [];
  for (const e of explorations) {
    for (const v of e.violations.slice(0, 10))
      lines.push(
        `${e.machine} (${v.check}): ${v.message}${v.path.length ? `\n    ${v.path.join(' -> ')}` : ''}`,
      );
    if (e.violations.length > 10) lines.push(`${e.machine}: ${e.violations.length - 10} more violation(s)`);
    for (const t of e.tableTransitions.neverTaken) lines.push(`${e.machine}: transition never taken: ${t}`);
    for (const c of e.children)
      for (const t of c.tableTransitions.neverTaken)
        lines.push(`${e.machine}: ${c.machine} transition never taken: ${t}`);
  }
  return lines.join('\n');
}

/** Per machine, each transition of its table with the shortest path the search found to it. */
export function reportWitnesses(explorations: readonly Exploration[]): string {
  return explorations
    .map((e) =>
      [
        `${e.machine}:`,
        ...[...e.witnesses].map(([transition, path]) => `  ${transition}\n    ${path.join(' -> ')}`),
      ].join('\n'),
    )
    .join('\n\n');
}
