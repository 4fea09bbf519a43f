import type { TransitionCoverage } from './coverage-runner.js';

/**
 * The share of the tables' transitions a run took, per machine and in all: what the model-based run prints.
 * `unreachable` are transitions known to be impossible in that run's setting (each with why): they are counted
 * apart, never as taken, and a run that takes one of them shows it as a wrong claim.
 */
export interface CoverageSummary {
  rows: { machine: string; taken: number; unreachable: number; total: number }[];
  /** Transitions neither taken nor listed as unreachable, as `<machine>: <name> <guard and targets>`. */
  neverTaken: string[];
  /** Transitions listed as unreachable that the run took anyway. */
  takenButListedUnreachable: string[];
}

/** The machines every client run must cover: a machine the run never started counts as 0 %. */
export const MACHINES = ['request', 'originHealth', 'outbox', 'outboxEntry'] as const;

export function summarize(
  coverage: readonly TransitionCoverage[],
  totals: Readonly<Record<string, number>>,
  unreachable: Readonly<Record<string, string>> = {},
): CoverageSummary {
  const isUnreachable = (machine: string, name: string) => `${machine}: ${name}` in unreachable;
  const rows = MACHINES.map((machine) => {
    const c = coverage.find((x) => x.machine === machine);
    const listed = Object.keys(unreachable).filter((k) => k.startsWith(`${machine}: `)).length;
    return {
      machine,
      taken: c ? c.counts.filter((n, i) => n > 0 && !isUnreachable(machine, c.names[i]!)).length : 0,
      unreachable: listed,
      total: totals[machine] ?? 0,
    };
  });
  const neverTaken = coverage.flatMap((c) =>
    c.names.flatMap((name, i) =>
      c.counts[i] === 0 && !isUnreachable(c.machine, name) ? [`${c.machine}: ${name} ${c.details[i]}`] : [],
    ),
  );
  for (const row of rows)
    if (!coverage.some((c) => c.machine === row.machine)) neverTaken.push(`${row.machine}: never started`);
  const takenButListedUnreachable = coverage.flatMap((c) =>
    c.names.flatMap((name, i) =>
      c.counts[i]! > 0 && isUnreachable(c.machine, name) ? [`${c.machine}: ${name}`] : [],
    ),
  );
  return { rows, neverTaken, takenButListedUnreachable };
}

/** Floored, so that 99.96 % never prints as 100 %. */
export const percent = (taken: number, total: number): string =>
  total === 0 ? '0' : (Math.floor((1000 * taken) / total) / 10).toString();

/** Whether every transition that can be taken was taken, and none listed as unreachable was. */
export const isComplete = (s: CoverageSummary): boolean =>
  s.neverTaken.length === 0 && s.takenButListedUnreachable.length === 0;

/**
 * A table per machine and in all (transitions taken of those the client can take, and of the whole table),
 * the `transition coverage: N %` lines (of the transitions the client can take), and what is missing.
 */
export function reportCoverage(s: CoverageSummary): string {
  const all = s.rows.reduce(
    (sum, r) => ({
      taken: sum.taken + r.taken,
      unreachable: sum.unreachable + r.unreachable,
      total: sum.total + r.total,
    }),
    { taken: 0, unreachable: 0, total: 0 },
  );
  const line = (name: string, r: { taken: number; unreachable: number; total: number }) =>
    `| ${name} | ${r.taken}/${r.total - r.unreachable} | ${percent(r.taken, r.total - r.unreachable)} % | ${r.unreachable} | ${r.taken}/${r.total} (${percent(r.taken, r.total)} %) |`;
  const lines = [
    '| machine | taken / reachable through the client | coverage | unreachable through the client | taken / whole table |',
    '| ------- | ------------------------------------ | -------- | ------------------------------ | ------------------- |',
    ...s.rows.map((r) => line(r.machine, r)),
    line('total', all),
    '',
    ...s.rows.map((r) => `${r.machine} transition coverage: ${percent(r.taken, r.total - r.unreachable)} %`),
    `transition coverage: ${percent(all.taken, all.total - all.unreachable)} % (${all.taken} of the ${all.total - all.unreachable} transitions the client can take; ${all.unreachable} of the tables' ${all.total} cannot be, listed in scripts/verify/model-based/unreachable.ts)`,
  ];
  if (s.neverTaken.length > 0) lines.push('never taken:', ...s.neverTaken.map((t) => `  ${t}`));
  if (s.takenButListedUnreachable.length > 0)
    lines.push('taken, though listed as unreachable:', ...s.takenButListedUnreachable.map((t) => `  ${t}`));
  return lines.join('\n');
}
