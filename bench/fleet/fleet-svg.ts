import { PHASES } from './fleet-world.js';
import type { FleetReport } from './run-fleet.js';

const COLORS: Record<string, string> = { failwise: '#1f77b4', naive: '#d62728', exponential: '#ff7f0e' };
const LABELS: Record<string, string> = {
  failwise: 'failwise (default policy)',
  naive: 'naive: 3 immediate retries',
  exponential: 'exponential backoff, no jitter',
};

/**
 * The primary's load over time, one line per policy (requests it saw per second: attempts and probes), with the
 * script's phases shaded: the plot docs/benchmarks.md shows. Hand-written SVG, no dependency.
 */
export function fleetSvg(report: FleetReport): string {
  const width = 900;
  const height = 380;
  const left = 64;
  const right = 16;
  const top = 40;
  const bottom = 56;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const seconds = Math.max(...report.policies.map((p) => p.primaryPerSecond.length));
  const peak = Math.max(1, ...report.policies.flatMap((p) => p.primaryPerSecond));
  const yMax = niceCeiling(peak);
  const x = (s: number) => left + (s / seconds) * plotW;
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">Load on the primary, ${report.options.clients} clients (requests per second, attempts and probes)</text>`,
  );
  for (const phase of PHASES) {
    if (phase.name === 'normal') continue;
    const fill = { outage: '#f8d7da', recovery: '#d4edda', errors: '#fff3cd', overload: '#e2d9f3' }[
      phase.name
    ];
    parts.push(
      `<rect x="${x(phase.from / 1000)}" y="${top}" width="${x(phase.to / 1000) - x(phase.from / 1000)}" height="${plotH}" fill="${fill}"/>`,
      `<text x="${x(phase.from / 1000) + 4}" y="${top + 14}" fill="#555">${phase.name}</text>`,
    );
  }
  for (let i = 0; i <= 5; i++) {
    const v = (yMax / 5) * i;
    parts.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${Math.round(v)}</text>`,
    );
  }
  for (let s = 0; s <= seconds; s += 30)
    parts.push(`<text x="${x(s)}" y="${top + plotH + 16}" text-anchor="middle">${s}</text>`);
  parts.push(
    `<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" stroke="#000"/>`,
    `<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#000"/>`,
    `<text x="${left + plotW / 2}" y="${height - 22}" text-anchor="middle">simulated time (s)</text>`,
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">requests per second at the primary</text>`,
  );
  for (const [i, p] of report.policies.entries()) {
    const points = p.primaryPerSecond.map((v, s) => `${x(s + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${COLORS[p.policy]}" stroke-width="1.5" points="${points}"/>`,
      `<rect x="${left + 10 + i * 260}" y="${height - 12}" width="14" height="4" fill="${COLORS[p.policy]}"/>`,
      `<text x="${left + 30 + i * 260}" y="${height - 6}">${LABELS[p.policy]}</text>`,
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
