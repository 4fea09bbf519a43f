import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { diagramPages } from '../../scripts/diagram-pages.js';
import { toMermaid } from '../../scripts/machine-diagram.js';
import { requestMachine } from '../../machines/request/request.machine.js';
import { originHealthMachine } from '../../machines/origin-health/origin-health.machine.js';
import { outboxMachine } from '../../machines/outbox/outbox.machine.js';
import type { AnyStateNode } from 'xstate';

const pages = await diagramPages();

describe('generated machine diagrams', () => {
  it.each(Object.entries(pages))(
    '%s matches the machine definition (run `npm run diagrams`)',
    (file, expected) => {
      expect(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')).toBe(expected);
    },
  );

  it('covers docs/machines.md, the index of the three machines', () => {
    expect(Object.keys(pages)).toContain('docs/machines.md');
  });

  it.each([
    ['requestMachine', requestMachine],
    ['originHealthMachine', originHealthMachine],
    ['outboxMachine', outboxMachine],
  ] as const)(
    'docs/machines.md has a section on %s naming its every state and implementation',
    (name, machine) => {
      const index = pages['docs/machines.md']!;
      const start = index.indexOf(`\n## ${name}\n`);
      expect(start, `a "## ${name}" section`).toBeGreaterThan(0);
      const end = index.indexOf('\n## ', start + 1);
      const section = index.slice(start, end < 0 ? undefined : end);
      const states: string[] = [];
      const visit = (node: AnyStateNode) => {
        if (node.parent) states.push(node.path.join('.'));
        for (const child of Object.values(node.states)) visit(child as AnyStateNode);
      };
      visit(machine.root);
      const { guards = {}, actions = {}, delays = {}, actors = {} } = machine.implementations;
      for (const named of [
        ...states,
        ...[guards, actions, delays, actors].flatMap((kind) => Object.keys(kind)),
      ])
        expect(section).toContain(`\`${named}\``);
      expect(section).toContain(toMermaid(machine));
    },
  );

  it('names every state, guard, delay and reason of the request machine', () => {
    const diagram = toMermaid(requestMachine);
    for (const name of [
      'choosingOrigin',
      'attempting',
      'evaluating',
      'backingOff',
      'refreshingAuth',
      'reconciling',
      'after attemptTimeout',
      'after backoffDelay',
      'after requestBudget',
      'and(not(isSafeToReplay), canReconcile)',
      '/ unsafe-to-replay',
      'request.cancel',
    ]) {
      expect(diagram).toContain(name);
    }
    expect(diagram).not.toMatch(/anonymous|xstate\.(after|done|error)/);
  });

  it('names every state, guard and delay of the origin-health machine', () => {
    const diagram = toMermaid(originHealthMachine);
    for (const name of [
      'healthy',
      'suspect',
      'failedOver',
      'probingFailback',
      'attempt.failed [tripsFailover]',
      'attempt.failed [makesSuspect]',
      'attempt.succeeded [recovers]',
      'done probe [probesSucceeded]',
      'after failedOverTime',
      'after probeTimeout',
      'after probeInterval',
    ]) {
      expect(diagram).toContain(name);
    }
    expect(diagram).not.toMatch(/anonymous|xstate\.(after|done|error)|\d\.originHealth/);
  });

  it('names every state, guard and delay of the outbox machine', () => {
    const diagram = toMermaid(outboxMachine);
    for (const name of [
      'loading',
      'loadFailed',
      'released',
      'acquiring',
      'waitingForLease',
      'held',
      'renewing',
      'releasing',
      'armed',
      'done loadEntries',
      'always [hasDueWork]',
      'always [isSettled]',
      'done acquireLease [isLeaseGranted]',
      'outbox.rearm [hasWakeTime]',
      'after nextDue',
      'after leaseRenewal',
      'after leaseRetry',
      'after loadRetry',
      'outbox.close',
    ]) {
      expect(diagram).toContain(name);
    }
    expect(diagram).not.toMatch(/anonymous|xstate\.(after|done|error)|\d\.outbox/);
  });
});
