import { PHASES } from './fleet-world.js';
import { linePlotSvg } from './line-plot-svg.js';
import type { FleetReport } from './run-fleet.js';

const COLORS: Record<string, string> = { failwise: '#1f77b4', naive: '#d62728', exponential: '#ff7f0e' };
const LABELS: Record<string, string> = {
  failwise: 'failwise (default policy)',
  naive: 'naive: 3 immediate retries',
  exponential: 'exponential backoff, no jitter',
};
const PHASE_FILLS: Record<string, string> = {
  outage: '#f8d7da',
  recovery: '#d4edda',
  errors: '#fff3cd',
  overload: '#e2d9f3',
};

/**
 * The primary's load over time, one line per policy (requests it saw per second: attempts and probes), with the
 * script's phases shaded: the plot docs/benchmarks.md shows.
 */
export function fleetSvg(report: FleetReport): string {
  return linePlotSvg({
    title: `Load on the primary, ${report.options.clients} clients (requests per second, attempts and probes)`,
    yLabel: 'requests per second at the primary',
    timeTickS: 30,
    bands: PHASES.filter((phase) => phase.name !== 'normal').map((phase) => ({
      fromMs: phase.from,
      toMs: phase.to,
      fill: PHASE_FILLS[phase.name]!,
      label: phase.name,
    })),
    lines: report.policies.map((p) => ({
      values: p.primaryPerSecond,
      color: COLORS[p.policy]!,
      label: LABELS[p.policy]!,
    })),
  });
}
