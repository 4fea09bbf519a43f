/**
 * A line plot over simulated time, as the fleet benchmark draws it for docs/benchmarks.md: one line per series,
 * a value a second, shaded bands for the phases of the script, axes and a legend. Hand-written SVG, no
 * dependency (a plotting library would be a dependency for two pictures).
 */
export interface LinePlot {
  title: string;
  yLabel: string;
  /** Seconds between the labels of the time axis. */
  timeTickS: number;
  /** Shaded spans of time (ms), each labelled at its start. */
  bands: readonly { fromMs: number; toMs: number; fill: string; label: string }[];
  /** One value a second each, drawn at the middle of its second. */
  lines: readonly { values: readonly number[]; color: string; label: string }[];
}

const WIDTH = 900;
const HEIGHT = 380;
const LEFT = 64;
const RIGHT = 16;
const TOP = 40;
const BOTTOM = 56;

export function linePlotSvg(plot: LinePlot): string {
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const seconds = Math.max(...plot.lines.map((line) => line.values.length));
  const yMax = niceCeiling(Math.max(1, ...plot.lines.flatMap((line) => line.values)));
  const x = (s: number) => LEFT + (s / seconds) * plotW;
  const y = (v: number) => TOP + plotH - (v / yMax) * plotH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${LEFT}" y="20" font-size="14" font-weight="bold">${plot.title}</text>`,
  ];
  for (const band of plot.bands) {
    const from = x(band.fromMs / 1000);
    parts.push(
      `<rect x="${from}" y="${TOP}" width="${x(band.toMs / 1000) - from}" height="${plotH}" fill="${band.fill}"/>`,
      `<text x="${from + 4}" y="${TOP + 14}" fill="#555">${band.label}</text>`,
    );
  }
  for (let i = 0; i <= 5; i++) {
    const v = (yMax / 5) * i;
    parts.push(
      `<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${LEFT - 6}" y="${y(v) + 4}" text-anchor="end">${Math.round(v)}</text>`,
    );
  }
  for (let s = 0; s <= seconds; s += plot.timeTickS)
    parts.push(`<text x="${x(s)}" y="${TOP + plotH + 16}" text-anchor="middle">${s}</text>`);
  parts.push(
    `<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${TOP + plotH}" y2="${TOP + plotH}" stroke="#000"/>`,
    `<line x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${TOP + plotH}" stroke="#000"/>`,
    `<text x="${LEFT + plotW / 2}" y="${HEIGHT - 22}" text-anchor="middle">simulated time (s)</text>`,
    `<text transform="translate(16 ${TOP + plotH / 2}) rotate(-90)" text-anchor="middle">${plot.yLabel}</text>`,
  );
  for (const [i, line] of plot.lines.entries()) {
    const points = line.values.map((v, s) => `${x(s + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${line.color}" stroke-width="1.5" points="${points}"/>`,
      `<rect x="${LEFT + 10 + i * 260}" y="${HEIGHT - 12}" width="14" height="4" fill="${line.color}"/>`,
      `<text x="${LEFT + 30 + i * 260}" y="${HEIGHT - 6}">${line.label}</text>`,
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
