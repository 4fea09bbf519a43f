// bench/hermes/hermes-report.ts, the pure half of `npm run bench:hermes`: reading what the script printed, the
// ratios against the targets, and the section kept between its markers. Nothing here runs the VM.
import { describe, expect, it } from 'vitest';

import {
  HERMES_END,
  HERMES_START,
  hermesRatios,
  hermesSection,
  keepHermesSection,
  parseHermesOutput,
  withHermesSection,
  type HermesResults,
} from '../../bench/hermes/hermes-report.js';
import type { PeerId, TimingSection } from '../../bench/report.js';

const section = (means: Partial<Record<PeerId, number>>): TimingSection => ({
  roundMs: 300,
  rows: Object.entries(means).map(([id, meanUs]) => ({
    id: id as PeerId,
    meanUs,
    medianUs: meanUs,
    minUs: meanUs,
    maxUs: meanUs,
    calls: 1_000,
    rounds: 10,
  })),
});

const results: HermesResults = {
  success: section({ handLoop: 4, cockatiel: 24, cockatielNoTimeout: 10, failwise: 20 }),
  retry: section({ handLoop: 8, cockatiel: 50, cockatielNoTimeout: 25, failwise: 60 }),
};

const meta = {
  command: 'npm run bench:hermes',
  date: 'today',
  vm: 'Hermes 1.0.0',
  hermesc: 'hermesc',
  durationS: 30,
};

describe('bench:hermes report', () => {
  it('reads the results from the line the script printed, among others', () => {
    const output = `a warning\nHERMES_BENCH ${JSON.stringify(results)}\n`;
    expect(parseHermesOutput(output)).toEqual(results);
  });

  it('throws with what the script printed when it did not finish', () => {
    expect(() => parseHermesOutput('HERMES_BENCH_ERROR ReferenceError: x')).toThrow(
      'bench:hermes: the script did not finish:\nHERMES_BENCH_ERROR ReferenceError: x',
    );
  });

  it("divides failwise's mean by each peer's, per section", () => {
    expect(hermesRatios(results)).toEqual({
      success: { cockatiel: 20 / 24, cockatielNoTimeout: 2, handLoop: 5 },
      retry: { cockatiel: 1.2, cockatielNoTimeout: 2.4, handLoop: 7.5 },
    });
  });

  it('marks each target met or not', () => {
    const text = hermesSection(results, meta);
    expect(text.startsWith(HERMES_START) && text.endsWith(HERMES_END)).toBe(true);
    expect(text).toMatch(
      /\| success path, failwise ÷ cockatiel \+ timeout \| +0\.83 x \| +<= 1\.00 x \| yes +\|/,
    );
    expect(text).toMatch(
      /\| retry path, failwise ÷ cockatiel \+ timeout +\| +1\.20 x \| +<= 1\.00 x \| no +\|/,
    );
    expect(text).toMatch(
      /\| retry path, failwise ÷ hand-written loop +\| +7\.50 x \| <= 5\.00 x \(aim\) \| no +\|/,
    );
  });

  it("adds the runs on React Native's own AbortController and URL, with their ratios and means, when given", () => {
    const current: HermesResults = {
      success: section({ handLoop: 4, cockatiel: 30, cockatielNoTimeout: 10, failwise: 24 }),
      retry: section({ handLoop: 8, cockatiel: 60, cockatielNoTimeout: 25, failwise: 66 }),
    };
    const before087: HermesResults = {
      success: section({ handLoop: 5, cockatiel: 40, cockatielNoTimeout: 11, failwise: 30 }),
      retry: section({ handLoop: 9, cockatiel: 50, cockatielNoTimeout: 26, failwise: 75 }),
    };
    expect(hermesSection(results, meta)).not.toContain("React Native's own AbortController and URL");
    const text = hermesSection(results, meta, { current, before087 });
    const [standIns, onReactNative] = text.split("### With React Native's own AbortController and URL");
    expect(standIns).toMatch(/\| success path, failwise ÷ cockatiel \+ timeout \| +0\.83 x \|/);
    // The targets, on React Native 0.87 and later.
    expect(onReactNative).toMatch(
      /\| success path, failwise ÷ cockatiel \+ timeout \| +0\.80 x \| +<= 1\.00 x \| yes +\|/,
    );
    expect(onReactNative).toMatch(
      /\| retry path, failwise ÷ cockatiel \+ timeout +\| +1\.10 x \| +<= 1\.00 x \| no +\|/,
    );
    expect(onReactNative).toMatch(
      /\| 0\.87 and later \| success \| 24\.00 \| 30\.00 \| 10\.00 \| 4\.00 \| 0\.80 x \|/,
    );
    expect(onReactNative).toMatch(
      /\| 0\.87 and later \| retry \| 66\.00 \| 60\.00 \| 25\.00 \| 8\.00 \| 1\.10 x \|/,
    );
    expect(onReactNative).toMatch(
      /\| 0\.70 to 0\.86 \| success \| 30\.00 \| 40\.00 \| 11\.00 \| 5\.00 \| 0\.75 x \|/,
    );
    expect(onReactNative).toMatch(
      /\| 0\.70 to 0\.86 \| retry \| 75\.00 \| 50\.00 \| 26\.00 \| 9\.00 \| 1\.50 x \|/,
    );
  });

  it('replaces the section in place, or adds it at the end', () => {
    const section = hermesSection(results, meta);
    const doc = `# Benchmarks\n\n${HERMES_START}\nold\n${HERMES_END}\n\n## After\n`;
    expect(withHermesSection(doc, section)).toBe(`# Benchmarks\n\n${section}\n\n## After\n`);
    expect(withHermesSection('# Benchmarks\n', section)).toBe(`# Benchmarks\n\n${section}\n`);
  });

  it('keeps the section when `npm run bench` rewrites the file', () => {
    const old = `# Old\n\n${HERMES_START}\nkept\n${HERMES_END}\n`;
    expect(keepHermesSection('# Fresh\n', old)).toBe(`# Fresh\n\n${HERMES_START}\nkept\n${HERMES_END}\n`);
    expect(keepHermesSection('# Fresh\n', '# Old\n')).toBe('# Fresh\n');
  });
});
