import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fc } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';

import { chromiumSkipReason, useChromium } from '../helpers/chromium.js';
import { RESPONSE_STEPS, type ResponseStep } from '../helpers/response-steps.js';

// BytesResponse in real headless Chromium, where its `Response` is Blink's, not undici's: the page's bundled
// script runs random sequences of steps on a BytesResponse and on a plain Response over the same bytes, and each
// step must give the same on both. test/transports/bytes-response.test.ts does the same on Node's Response.

/** What the page script keeps on `globalThis.bytesResponseProbe`. */
interface BytesResponseProbe {
  canAnswerFromBytes: boolean;
  /** Runs `steps` on a plain Response and on a BytesResponse over `bytes`; what each step gave on each. */
  compare(
    bytes: number[],
    contentType: string,
    steps: ResponseStep[],
  ): Promise<{ plain: unknown[]; answered: unknown[] }>;
}

const pageScript = `
import { BytesResponse, canAnswerFromBytes } from '../../src/transports/bytes-response.ts';
import { runResponseStep } from '../helpers/response-steps.ts';

async function runAll(response, steps) {
  const results = [];
  for (const step of steps) results.push(await runResponseStep(response, step));
  return results;
}

globalThis.bytesResponseProbe = {
  canAnswerFromBytes: canAnswerFromBytes(),
  async compare(bytes, contentType, steps) {
    const init = () => ({ status: 200, statusText: 'OK', headers: { 'content-type': contentType } });
    return {
      plain: await runAll(new Response(new Uint8Array(bytes), init()), steps),
      answered: await runAll(new BytesResponse(new Uint8Array(bytes), init()), steps),
    };
  },
};
`;

const encode = (text: string): number[] => [...new TextEncoder().encode(text)];

describe.skipIf(chromiumSkipReason !== undefined)('BytesResponse in headless Chromium', () => {
  const chromium = useChromium({
    entry: { contents: pageScript, resolveDir: dirname(fileURLToPath(import.meta.url)) },
  });

  it('answers from bytes there, and gives what a plain Response gives, step by step (fast-check, 100 runs)', async () => {
    const { page, errors } = await chromium.openPage();
    expect(
      await page.evaluate(
        () =>
          (globalThis as unknown as { bytesResponseProbe: BytesResponseProbe }).bytesResponseProbe
            .canAnswerFromBytes,
      ),
    ).toBe(true);
    const bodies = fc.oneof(
      fc.json().map((text) => ({ bytes: encode(text), contentType: 'application/json' })),
      fc.json().map((text) => ({ bytes: encode(`\uFEFF${text}`), contentType: 'application/json' })),
      fc.string().map((text) => ({ bytes: encode(text), contentType: 'text/plain;charset=UTF-8' })),
      fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.string({ maxLength: 5 })).map((fields) => ({
        bytes: encode(new URLSearchParams(fields).toString()),
        contentType: 'application/x-www-form-urlencoded',
      })),
      fc
        .array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 })
        .map((bytes) => ({ bytes, contentType: 'application/octet-stream' })),
    );
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.array(fc.constantFrom(...RESPONSE_STEPS), { minLength: 1, maxLength: 5 }),
        async ({ bytes, contentType }, steps) => {
          const { plain, answered } = await page.evaluate(
            ([bytes, contentType, steps]) =>
              (
                globalThis as unknown as { bytesResponseProbe: BytesResponseProbe }
              ).bytesResponseProbe.compare(bytes, contentType, steps),
            [bytes, contentType, steps] as const,
          );
          expect(answered.map((got, i) => ({ step: steps[i], got }))).toEqual(
            plain.map((got, i) => ({ step: steps[i], got })),
          );
        },
      ),
      { numRuns: 100 },
    );
    expect(errors).toEqual([]);
  });
});
