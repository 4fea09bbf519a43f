/**
 * The drill's table for a terminal: one row per scenario with what the policy decided (requests and their
 * ends, attempts, waits, origins) and what the origins saw (requests, probes, writes applied), then the
 * verdict; after it, every check that failed.
 */
import { countedList } from './counted-list.js';
import type { DrillReport, ScenarioReport } from './drill-report.js';

export function formatMs(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1_000).toFixed(1))} s`;
  return `${Number((ms / 60_000).toFixed(1))} min`;
}

function waitsOf(waitsMs: readonly number[]): string {
  if (waitsMs.length === 0) return 'none';
  if (waitsMs.length <= 3) return waitsMs.map(formatMs).join(', ');
  return `${waitsMs.length} (${formatMs(Math.min(...waitsMs))}..${formatMs(Math.max(...waitsMs))})`;
}

function seenOf(report: ScenarioReport): string {
  return report.seen
    .map(({ origin, requests, probes, writesApplied }) => {
      const parts = [`${requests} req`];
      if (probes > 0) parts.push(`${probes} probes`);
      parts.push(`${writesApplied} applied`);
      return `${origin}: ${parts.join(', ')}`;
    })
    .join('; ');
}

export function summaryRow(report: ScenarioReport): string[] {
  const { decided } = report;
  return [
    report.name,
    countedList(decided.outcomes, 'x') || '-',
    String(decided.attempts),
    waitsOf(decided.waitsMs),
    decided.origins.join(', ') || '-',
    seenOf(report),
    report.verdict === 'pass' ? 'pass' : 'FAIL',
  ];
}

const HEADER = ['scenario', 'outcome', 'attempts', 'waits', 'origins tried', 'origins saw', 'verdict'];

/** Plain text columns, padded to the widest cell, with a rule under the header. */
export function summaryTable(report: DrillReport): string {
  const rows = [HEADER, ...report.scenarios.map(summaryRow)];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  const lines = [
    line(HEADER),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...rows.slice(1).map(line),
  ];
  for (const scenario of report.scenarios) {
    if (scenario.verdict === 'pass') continue;
    lines.push('', `FAIL ${scenario.name}: expected ${scenario.expected}`);
    if (scenario.error !== undefined) lines.push(`  error: ${scenario.error}`);
    for (const check of scenario.checks)
      if (!check.pass)
        lines.push(`  x ${check.label}${check.detail === undefined ? '' : ` (${check.detail})`}`);
  }
  return lines.join('\n');
}
