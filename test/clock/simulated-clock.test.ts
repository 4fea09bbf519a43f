import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { simulatedClock } from '../../src/clock/simulated-clock.js';

describe('simulatedClock', () => {
  it('fires each timer at its own due time, in due order, ties in the order they were armed', async () => {
    const clock = simulatedClock({ startAt: 1_000 });
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${clock.now()}`);
    clock.setTimeout(at('c'), 30);
    clock.setTimeout(at('a'), 10);
    clock.setTimeout(at('b1'), 20);
    clock.setTimeout(at('b2'), 20);
    await clock.increment(25);
    expect(fired).toEqual(['a@1010', 'b1@1020', 'b2@1020']);
    expect(clock.now()).toBe(1_025);
    expect(clock.pending()).toBe(1);
    await clock.set(1_030);
    expect(fired.at(-1)).toBe('c@1030');
    expect(clock.pending()).toBe(0);
  });

  it('lets promises settle after each timer, so a timer armed by a promise fires in the same advance', async () => {
    const clock = simulatedClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      void Promise.resolve().then(() => clock.setTimeout(() => fired.push(clock.now()), 5));
    }, 10);
    await clock.increment(20);
    expect(fired).toEqual([15]);
  });

  it('clears timers and treats a negative or NaN delay as 0', async () => {
    const clock = simulatedClock();
    const fired: string[] = [];
    const handle = clock.setTimeout(() => fired.push('cleared'), 5);
    clock.setTimeout(() => fired.push('negative'), -5);
    clock.setTimeout(() => fired.push('nan'), Number.NaN);
    clock.clearTimeout(handle);
    await clock.increment(0);
    expect(fired).toEqual(['negative', 'nan']);
  });

  it('runs every timer, including ones armed while running, with runAll', async () => {
    const clock = simulatedClock();
    let count = 0;
    const tick = () => {
      count += 1;
      if (count < 5) clock.setTimeout(tick, 1_000);
    };
    clock.setTimeout(tick, 1_000);
    await clock.runAll();
    expect(count).toBe(5);
    expect(clock.now()).toBe(5_000);
  });

  it('refuses to move back in time, naming both times', async () => {
    const clock = simulatedClock({ startAt: 100 });
    await expect(clock.set(50)).rejects.toThrow(
      'simulatedClock: set(time): cannot move back in time (now 100, asked 50)',
    );
    await expect(clock.increment(-1)).rejects.toThrow(
      'simulatedClock: increment(ms): cannot move back in time (now 100, asked 99)',
    );
    await expect(clock.increment(Number.NaN)).rejects.toThrow(ArgumentError);
    expect(() => simulatedClock({ startAt: Number.POSITIVE_INFINITY })).toThrow(
      'simulatedClock: options.startAt: expected a finite number, got Infinity',
    );
  });

  it('runAll stops at the last timer that fired, never at one cancelled meanwhile', async () => {
    const clock = simulatedClock();
    // A long timer, cancelled by the work a short one (armed once promises settle) does.
    const long = clock.setTimeout(() => undefined, 10_000);
    void Promise.resolve().then(() => clock.setTimeout(() => clock.clearTimeout(long), 5));
    await clock.runAll();
    expect(clock.now()).toBe(5);
    expect(clock.pending()).toBe(0);
  });

  it('tells when the earliest armed timer is due, and nothing once none is armed', async () => {
    const clock = simulatedClock({ startAt: 100 });
    expect(clock.nextTimerAt()).toBeUndefined();
    const late = clock.setTimeout(() => undefined, 50);
    clock.setTimeout(() => undefined, 20);
    expect(clock.nextTimerAt()).toBe(120);
    await clock.increment(20);
    expect(clock.nextTimerAt()).toBe(150);
    clock.clearTimeout(late);
    expect(clock.nextTimerAt()).toBeUndefined();
  });
});
