import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DrillReport } from '../../src/drill/drill-report.js';
import { renderHtmlReport } from '../../src/drill/html-report.js';
import { runDrill } from '../../src/drill/run-drill.js';
import { scenarios } from '../../src/drill/scenarios/index.js';
import { chromiumSkipReason, useChromium } from '../helpers/chromium.js';

// The drill's HTML report, from real scenarios (real 127.0.0.1 origins, simulated clock), opened from a file
// in headless Chromium: it renders without an error, asks the network for nothing but itself, and draws
// every attempt. The page and its screenshot stay in a fixed temp folder, overwritten each run, for a person
// to look at.

/** The many-attempts one, the failover one and the one that takes no simulated time, where they exist. */
const PREFERRED = ['flapping-primary', 'failover-failback', 'expired-token', 'response-timeout'];
const picked = [
  ...new Set([
    ...PREFERRED.flatMap((name) => scenarios.filter((scenario) => scenario.name === name)),
    ...scenarios,
  ]),
].slice(0, 3);

const outDir = join(tmpdir(), 'failwise-drill-report');
const htmlPath = join(outDir, 'report.html');
const screenshotPath = join(outDir, 'report.png');

describe.skipIf(chromiumSkipReason !== undefined)('the drill report in headless Chromium', () => {
  // The helper owns launching, timeouts and closing; its page server goes unused (the report is a file).
  const chromium = useChromium({
    entry: { contents: '', resolveDir: dirname(fileURLToPath(import.meta.url)) },
  });
  let report: DrillReport;

  beforeAll(async () => {
    report = await runDrill(picked);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(htmlPath, renderHtmlReport(report));
  }, 60_000);

  it('renders every scenario from the file alone, with one element per attempt', async () => {
    expect(report.scenarios.length).toBeGreaterThan(0);
    const context = await chromium.browser.newContext({ viewport: { width: 1100, height: 900 } });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console.error: ${message.text()}`);
      });
      page.on('request', (request) => requests.push(request.url()));
      // Nothing may leave the page; were anything to try, it fails here instead of reaching out.
      await context.route(/^(?!file:)/, (route) => route.abort());

      const fileUrl = pathToFileURL(htmlPath).href;
      await page.goto(fileUrl, { waitUntil: 'load' });

      for (const scenario of report.scenarios) {
        const section = page.locator(`section[data-scenario="${scenario.name}"]`);
        expect(await section.isVisible(), scenario.name).toBe(true);
        const box = await section.locator('svg[data-kind="timeline"]').boundingBox();
        expect(box?.width, scenario.name).toBeGreaterThan(0);
        expect(box?.height, scenario.name).toBeGreaterThan(0);
        expect(await section.locator('[data-kind="attempt"]').count(), scenario.name).toBe(
          scenario.timeline.attempts.length,
        );
        expect(await section.locator('[data-kind="served"]').count(), scenario.name).toBe(
          scenario.timeline.served.length,
        );
        // Drawn, not just present: each attempt bar has a real size on screen.
        const smallest = await section
          .locator('[data-kind="attempt"]')
          .evaluateAll((bars) => Math.min(...bars.map((bar) => (bar as SVGGraphicsElement).getBBox().width)));
        if (scenario.timeline.attempts.length > 0) expect(smallest, scenario.name).toBeGreaterThanOrEqual(1);
      }
      expect(await page.locator('[data-kind="attempt"]').count()).toBe(
        report.scenarios.reduce((sum, scenario) => sum + scenario.timeline.attempts.length, 0),
      );

      // A summary link scrolls its section into view.
      const last = report.scenarios.at(-1);
      await page.locator(`tr[data-scenario="${last?.name}"] a`).click();
      await expect
        .poll(() => page.locator(`section[data-scenario="${last?.name}"] h2`).isVisible())
        .toBe(true);
      expect(await page.evaluate(() => location.hash)).toMatch(/^#scenario-/);

      await page.screenshot({ path: screenshotPath, fullPage: true });
      const png = readFileSync(screenshotPath);
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(png.length).toBeGreaterThan(10_000);

      expect(requests).toEqual([fileUrl]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
