import { fc } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../../src/stores/base64.js';

// Node's Buffer is the reference: what keyValueStore writes must be standard base64 that any tool reads.
describe('base64 of byte bodies (keyValueStore)', () => {
  it('writes what Buffer writes, and reads it back to the same bytes, for every length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const text = toBase64(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64'));
        const back = fromBase64(text)!;
        expect(Object.getPrototypeOf(back)).toBe(Uint8Array.prototype);
        expect([...back]).toEqual([...bytes]);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses text that is not base64 rather than make up bytes', () => {
    for (const text of ['abc', 'ab=c', '====', 'a===', 'ab c', 'é123', 'AA==AA=='])
      expect(fromBase64(text), text).toBeUndefined();
    expect([...fromBase64('')!]).toEqual([]);
  });
});
