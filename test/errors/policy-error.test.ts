import { describe, expect, it } from 'vitest';
import { FailwiseError } from '../../src/errors/failwise-error.js';
import { PolicyError } from '../../src/errors/policy-error.js';

describe('PolicyError', () => {
  it('prints one line per issue, path first', () => {
    const error = new PolicyError([
      { path: 'policy.backoff.initialMs', message: 'expected a number >= 0, got -1' },
      { path: 'policy.retryableStatuses[1]', message: 'expected a number >= 400, got 200' },
    ]);
    expect(error.message).toBe(
      'policy.backoff.initialMs: expected a number >= 0, got -1\npolicy.retryableStatuses[1]: expected a number >= 400, got 200',
    );
  });

  it('prints an issue without a path as its message alone', () => {
    expect(new PolicyError([{ path: '', message: 'expected an object, got 5' }]).message).toBe(
      'expected an object, got 5',
    );
  });

  it('is a FailwiseError named PolicyError', () => {
    const error = new PolicyError([]);
    expect(error).toBeInstanceOf(FailwiseError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('PolicyError');
  });

  it('keeps a frozen copy of the issues', () => {
    const issues = [{ path: 'policy.budgetMs', message: 'expected a number > 0, got 0' }];
    const error = new PolicyError(issues);
    issues[0]!.message = 'changed';
    expect(error.issues).toEqual([{ path: 'policy.budgetMs', message: 'expected a number > 0, got 0' }]);
    expect(Object.isFrozen(error.issues)).toBe(true);
    expect(Object.isFrozen(error.issues[0])).toBe(true);
  });

  it('keeps a cause', () => {
    const cause = new Error('root');
    expect(new PolicyError([], { cause }).cause).toBe(cause);
  });
});
