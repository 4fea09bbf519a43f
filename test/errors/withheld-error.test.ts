import { describe, expect, it } from 'vitest';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { WithheldError } from '../../src/errors/withheld-error.js';

describe('WithheldError', () => {
  it("keeps the thrown error's name and nothing else", () => {
    const thrown = Object.assign(new TypeError('fetch https://api.example.test/?token=SECRET'), {
      detail: 'SECRET',
      cause: new Error('SECRET'),
    });
    const withheld = new WithheldError(thrown);
    expect(withheld).toBeInstanceOf(FailwiseError);
    expect(withheld.name).toBe('TypeError');
    expect(withheld.message).toBe(
      'TypeError: its message and fields are withheld from the machines (docs/rules.md, rule 9)',
    );
    expect(withheld.cause).toBeUndefined();
    expect(JSON.stringify({ ...withheld, stack: withheld.stack })).not.toContain('SECRET');
  });

  it('names what was thrown when it is not an Error', () => {
    expect(new WithheldError('SECRET').name).toBe('string');
  });
});
