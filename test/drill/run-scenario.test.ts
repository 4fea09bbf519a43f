import { describe, expect, it } from 'vitest';
import { originConfig, reply } from '../../src/drill/drill-origin.js';
import type { DrillScenario } from '../../src/drill/drill-scenario.js';
import { runScenario } from '../../src/drill/run-scenario.js';

// A scenario's verdict is earned: an exception, or a scenario that checks nothing, fails it; and whatever
// happens, the harness closes what the scenario opened.
describe('runScenario', () => {
  it('fails a scenario that throws, keeps the checks made before, and closes its origins', async () => {
    let url = '';
    const throwing: DrillScenario = {
      name: 'throws',
      title: 'throws midway',
      expected: 'nothing',
      async run(drill) {
        const primary = await drill.origin('primary');
        url = primary.url;
        drill.check('a check before the throw', true);
        throw new Error('scenario broke');
      },
    };
    const report = await runScenario(throwing);
    expect(report).toMatchObject({ verdict: 'fail', error: 'scenario broke' });
    expect(report.checks).toEqual([{ label: 'a check before the throw', pass: true }]);
    await expect(fetch(`${url}/`)).rejects.toThrow();
  });

  it('fails a scenario that checked nothing', async () => {
    const idle: DrillScenario = {
      name: 'idle',
      title: 'idle',
      expected: 'nothing',
      run: async () => undefined,
    };
    expect(await runScenario(idle)).toMatchObject({ verdict: 'fail', error: 'the scenario checked nothing' });
  });

  it('stops a scenario whose work can never end, instead of hanging', async () => {
    const stuck: DrillScenario = {
      name: 'stuck',
      title: 'waits on nothing',
      expected: 'nothing',
      run: (drill) => drill.drive(new Promise<void>(() => undefined)),
    };
    expect(await runScenario(stuck)).toMatchObject({
      verdict: 'fail',
      error: 'drill: the work did not end, nothing is on the wire and no timer is armed',
    });
  });

  it('builds the timeline from what happened: attempts, waits, what the origin saw', async () => {
    const scenario: DrillScenario = {
      name: 'one-retry',
      title: 'one 503 then 200',
      expected: 'two attempts',
      async run(drill) {
        const primary = await drill.origin('primary', (request) =>
          request.n === 1 ? reply.status(503) : reply.ok(),
        );
        const outcome = await drill.run(drill.client({ origins: [originConfig(primary)] }), {
          path: '/a?secret=1',
        });
        drill.expectEqual('succeeded', outcome.status, 'succeeded');
      },
    };
    const { timeline, decided, verdict } = await runScenario(scenario);
    expect(verdict).toBe('pass');
    expect(timeline.attempts.map(({ attempt, result, origin }) => [attempt, result, origin])).toEqual([
      [1, 'unavailable 503', 'primary'],
      [2, 'ok', 'primary'],
    ]);
    expect(timeline.waits).toHaveLength(1);
    expect(timeline.attempts[1]!.startAt).toBe(timeline.waits[0]!.to);
    expect(timeline.served.map(({ reply: r, at }) => [r, at])).toEqual([
      ['503', 0],
      ['200', timeline.waits[0]!.to],
    ]);
    expect(decided).toMatchObject({
      requests: 1,
      attempts: 2,
      origins: ['primary'],
      outcomes: ['succeeded'],
    });
    // Like decision events (rule 9), the report never shows a query string.
    expect(JSON.stringify(timeline)).not.toContain('secret');
  });
});
