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
 * the outage plot in docs/benchmarks.md. Hand-written SVG, no dependency.
 */
export function rateLimitedSvg(report: RateLimitedReport, variant: LimitVariant): string {
  const width = 900;
  const height = 380;
  const left = 64;
  const right = 16;
  const top = 40;
  const bottom = 56;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const runs = report.runs.filter((r) => r.variant === variant);
  const seconds = Math.max(...runs.map((r) => r.refusedPerSecond.length));
  const peak = Math.max(1, ...runs.flatMap((r) => r.refusedPerSecond));
  const yMax = niceCeiling(peak);
  const x = (s: number) => left + (s / seconds) * plotW;
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const { clients, limit } = report.options;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">429s per second, ${clients} clients, an origin admitting ${limit}/s (${LIMIT_LABELS[variant]})</text>`,
  ];
  const overload = LIMITED_PHASES[0];
  parts.push(
    `<rect x="${x(overload.from / 1000)}" y="${top}" width="${x(overload.to / 1000) - x(overload.from / 1000)}" height="${plotH}" fill="#e2d9f3"/>`,
    `<text x="${x(0) + 4}" y="${top + 14}" fill="#555">asked ${overload.load}x the limit</text>`,
  );
  for (let i = 0; i <= 5; i++) {
    const v = (yMax / 5) * i;
    parts.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${Math.round(v)}</text>`,
    );
  }
  for (let s = 0; s <= seconds; s += 10)
    parts.push(`<text x="${x(s)}" y="${top + plotH + 16}" text-anchor="middle">${s}</text>`);
  parts.push(
    `<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" stroke="#000"/>`,
    `<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#000"/>`,
    `<text x="${left + plotW / 2}" y="${height - 22}" text-anchor="middle">simulated time (s)</text>`,
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">429 answers per second</text>`,
  );
  for (const [i, r] of runs.entries()) {
    const points = r.refusedPerSecond.map((v, s) => `${x(s + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${COLORS[r.client]}" stroke-width="1.5" points="${points}"/>`,
      `<rect x="${left + 10 + i * 260}" y="${height - 12}" width="14" height="4" fill="${COLORS[r.client]}"/>`,
      `<text x="${left + 30 + i * 260}" y="${height - 6}">${LABELS[r.client]}</text>`,
    );
  }
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

/** 1, 2 or 5 times a power of ten, at least `v`. */
function niceCeiling(v: number): number {
  const power = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * power).find((n) => n >= v)!;
}
