import { linePlotSvg } from './line-plot-svg.js';
import { LIMIT_LABELS, LIMITED_PHASES, type LimitVariant } from './rate-limited-world.js';
import type { RateLimitedReport } from './rate-limited-run.js';

const COLORS: Record<string, string> = { failwise: '#1f77b4', naive: '#d62728', 'aws-standard': '#ff7f0e' };
const LABELS: Record<string, string> = {
  failwise: 'failwise (default policy)',
  naive: 'naive: 3 immediate retries',
  'aws-standard': 'AWS standard retry mode',
};

/**
 * 429s per second at the rate-limited origin, one line per client, for one way of answering: the plot next to
 * the outage plot in docs/benchmarks.md.
 */
export function rateLimitedSvg(report: RateLimitedReport, variant: LimitVariant): string {
  const { clients, limit } = report.options;
  const overload = LIMITED_PHASES[0];
  return linePlotSvg({
    title: `429s per second, ${clients} clients, an origin admitting ${limit}/s (${LIMIT_LABELS[variant]})`,
    yLabel: '429 answers per second',
    timeTickS: 10,
    bands: [
      {
        fromMs: overload.from,
        toMs: overload.to,
        fill: '#e2d9f3',
        label: `asked ${overload.load}x the limit`,
      },
    ],
    lines: report.runs
      .filter((r) => r.variant === variant)
      .map((r) => ({ values: r.refusedPerSecond, color: COLORS[r.client]!, label: LABELS[r.client]! })),
  });
}
