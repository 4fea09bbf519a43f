import type { AnyStateMachine } from 'xstate';
import { originHealthMachine } from '../../machines/origin-health/origin-health.machine.js';
import { outboxMachine } from '../../machines/outbox/outbox.machine.js';
import { requestMachine } from '../../machines/request/request.machine.js';
import { createXStateRunner, type InspectionObserver } from '../engine/xstate-runner.js';
import type { MachineRunner } from '../engine/machine-runner.js';
import type { InspectOption } from './client-options.js';

export type { InspectionObserver } from '../engine/xstate-runner.js';

/** The XState machine behind each table, by machine id. */
const machines: Readonly<Record<string, AnyStateMachine>> = {
  request: requestMachine,
  originHealth: originHealthMachine,
  outbox: outboxMachine,
};

/**
 * The client's `inspect` option: the client then runs every machine as a real XState actor with this
 * inspection observer, so the Stately inspector (or any observer) sees every actor, snapshot and event.
 * Without it the client runs the same machines in the lean executor, and its bundle has no XState.
 */
export function withInspector(observer: InspectionObserver): InspectOption {
  return { runner: xstateRunner(observer) };
}

/** Runs failwise's machines as XState actors: what `withInspector` gives the client. */
export function xstateRunner(inspect?: InspectionObserver): MachineRunner {
  return createXStateRunner(machines, inspect);
}
