import { describe, expect, it } from 'vitest';
import { errorNameOf } from '../../src/policy/error-name.js';

describe('errorNameOf', () => {
  it('names an error by its name, never its message', () => {
    expect(errorNameOf(new TypeError('https://user:secret@example.test/'))).toBe('TypeError');
    const custom = Object.assign(new Error('token abc'), { name: 'StoreClosedError' });
    expect(errorNameOf(custom)).toBe('StoreClosedError');
  });

  it('names anything else thrown by its type', () => {
    expect(errorNameOf('secret')).toBe('string');
    expect(errorNameOf(undefined)).toBe('undefined');
    expect(errorNameOf({ name: 'NotAnError', message: 'x' })).toBe('object');
  });
});
