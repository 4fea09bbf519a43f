import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../src/errors/argument-error.js';
import type { ConnectivityHint } from '../../src/connectivity/connectivity-source.js';
import { manualConnectivity } from '../../src/connectivity/manual-connectivity.js';

/** A source with one recording listener. */
const recorded = (source: ReturnType<typeof manualConnectivity>) => {
  const hints: ConnectivityHint[] = [];
  const unsubscribe = source.subscribe((hint) => hints.push(hint));
  return { hints, unsubscribe };
};

describe('manualConnectivity', () => {
  it('starts unknown, or in the state it is given', () => {
    expect(manualConnectivity().current()).toBe('unknown');
    expect(manualConnectivity('offline').current()).toBe('offline');
    expect(manualConnectivity('online').current()).toBe('online');
  });

  it('sets the state from online and offline hints and tells each listener', () => {
    const source = manualConnectivity();
    const first = recorded(source);
    const second = recorded(source);

    source.set('offline');
    expect(source.current()).toBe('offline');
    source.set('online');
    expect(source.current()).toBe('online');

    expect(first.hints).toEqual(['offline', 'online']);
    expect(second.hints).toEqual(['offline', 'online']);
  });

  it('does not repeat a hint for the state it is already in', () => {
    const source = manualConnectivity('online');
    const { hints } = recorded(source);

    source.set('online');
    source.set('offline');
    source.set('offline');

    expect(hints).toEqual(['offline']);
  });

  it('passes changed on every time and keeps the state', () => {
    const source = manualConnectivity('offline');
    const { hints } = recorded(source);

    source.set('changed');
    source.set('changed');

    expect(hints).toEqual(['changed', 'changed']);
    expect(source.current()).toBe('offline');
  });

  it('stops telling a listener once it unsubscribed', () => {
    const source = manualConnectivity();
    const { hints, unsubscribe } = recorded(source);

    source.set('offline');
    unsubscribe();
    source.set('online');

    expect(hints).toEqual(['offline']);
  });

  it('still tells the other listeners when one throws', () => {
    const source = manualConnectivity();
    const before = recorded(source);
    source.subscribe(() => {
      throw new Error('listener failed');
    });
    const after = recorded(source);

    expect(() => source.set('offline')).not.toThrow();

    expect(before.hints).toEqual(['offline']);
    expect(after.hints).toEqual(['offline']);
    expect(source.current()).toBe('offline');
  });

  it('rejects a hint that is not online, offline or changed, and keeps its state', () => {
    const source = manualConnectivity('online');
    const { hints } = recorded(source);

    // A JavaScript caller (or a NetInfo value passed through) is not held back by the types.
    const set = source.set as (hint: unknown) => void;
    expect(() => set('unknown')).toThrow(
      new ArgumentError(
        'manualConnectivity.set',
        'hint',
        'expected "online", "offline" or "changed", got "unknown"',
      ),
    );
    expect(() => set(undefined)).toThrow(ArgumentError);
    expect(() => set(false)).toThrow(
      'manualConnectivity.set: hint: expected "online", "offline" or "changed", got false',
    );

    expect(source.current()).toBe('online');
    expect(hints).toEqual([]);
  });

  it('refuses a starting state that is not online, offline or unknown', () => {
    // A JavaScript caller (or a NetInfo value passed through) is not held back by the types.
    const make = manualConnectivity as (initial: unknown) => unknown;
    expect(() => make('maybe')).toThrow(
      new ArgumentError(
        'manualConnectivity',
        'initial',
        'expected "online", "offline" or "unknown", got "maybe"',
      ),
    );
    expect(() => make(null)).toThrow(
      'manualConnectivity: initial: expected "online", "offline" or "unknown", got null',
    );
    expect(() => make(true)).toThrow(ArgumentError);
    expect(() => make('changed')).toThrow(ArgumentError);
  });
});
