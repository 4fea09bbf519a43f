import type { MachineLogic } from '../../src/engine/machine-logic.js';
import type { MachineTable } from '../../src/engine/machine-table.js';
import { LeanActor, type ChildMachine, type LeanEffect } from '../../src/engine/lean-actor.js';
import type { TimerTarget, Timers } from '../../src/engine/timers.js';

/**
 * One machine run in the lean executor, driven by hand and synchronously: its timers are armed but fire only
 * when told (time exists only as `after` events), and every actor it starts waits until told how to answer.
 * The same stimuli from the same input give the same run, so a state is reached again by replaying its path.
 */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** What can happen next to a run: an event sent to it, one of its timers firing, or a running actor answering. */
export type Stimulus =
  | { kind: 'event'; event: { type: string; [key: string]: unknown } }
  | { kind: 'timer'; event: string }
  | { kind: 'answer'; call: number; label: string; outcome: () => Outcome };

/** An actor the machine started (invoked or spawned): its input, and whether it is still waiting. */
export interface Call {
  readonly src: string;
  readonly input: unknown;
  aborted: boolean;
  answered: boolean;
  /** The outcome given, once answered. */
  outcome?: Outcome;
  reply?: (outcome: Outcome) => void;
}

/** How a spawned child's answer becomes the one event it sends back. */
export type SpawnedReply = (input: never, outcome: Outcome) => { type: string };

export interface RunSpec {
  table: MachineTable;
  logic: MachineLogic<unknown, unknown>;
  /** Names of the invoked actors. */
  invoked: readonly string[];
  /** Names of the spawned children, with how each one's answer becomes its event. */
  spawned?: Readonly<Record<string, SpawnedReply>>;
  /** Machines the machine starts as children (the outbox's `outboxEntry`), by name. */
  machines?: Readonly<Record<string, ChildMachine>>;
}

interface Armed {
  readonly target: TimerTarget & { readonly event: string };
  readonly delayMs: number;
}

export class DrivenRun {
  readonly actor: LeanActor<Record<string, unknown>, unknown>;
  readonly calls: Call[] = [];
  /** The events sent so far (a model may bound them per path). */
  readonly sent: Extract<Stimulus, { kind: 'event' }>['event'][] = [];
  readonly #armed = new Set<Armed>();

  constructor(spec: RunSpec, input: unknown) {
    const timers: Timers = {
      set: (target, delayMs) => {
        const armed = { target: target as Armed['target'], delayMs };
        this.#armed.add(armed);
        return armed;
      },
      clear: (handle) => void this.#armed.delete(handle as Armed),
    };
    const actors: Record<string, LeanEffect> = {};
    for (const src of spec.invoked) actors[src] = (i: never, signal) => this.#call(src, i, signal, (o) => o);
    for (const [src, toEvent] of Object.entries(spec.spawned ?? {}))
      actors[src] = (i: never, signal) =>
        this.#call(src, i, signal, (o) => ({ ok: true, value: toEvent(i, o) }));
    this.actor = new LeanActor(
      {
        table: spec.table,
        logic: spec.logic as MachineLogic<Record<string, unknown>, unknown>,
        timers,
        actors,
        machines: spec.machines,
      },
      input,
    );
    this.actor.start();
  }

  /** Calls still waiting for an answer, with their index in `calls`. */
  pending(): [number, Call][] {
    return this.calls.flatMap((c, i): [number, Call][] => (c.aborted || c.answered ? [] : [[i, c]]));
  }

  /** The events of the armed timers, in the order they were armed. */
  timers(): string[] {
    return [...this.#armed].map((a) => a.target.event);
  }

  apply(stimulus: Stimulus): void {
    if (stimulus.kind === 'event') {
      this.sent.push(stimulus.event);
      this.actor.send(stimulus.event);
    } else if (stimulus.kind === 'timer') this.#fire(stimulus.event);
    else this.#answer(stimulus.call, stimulus.outcome());
  }

  #fire(event: string): void {
    const armed = [...this.#armed].find((a) => a.target.event === event);
    if (armed === undefined) throw new Error(`no timer armed for ${event}`);
    this.#armed.delete(armed);
    armed.target.fire();
  }

  #answer(index: number, outcome: Outcome): void {
    const call = this.calls[index];
    if (call === undefined || call.aborted || call.answered) throw new Error(`call ${index} is not waiting`);
    call.answered = true;
    call.outcome = outcome;
    call.reply!(outcome);
  }

  /**
   * Starts an actor: a thenable the executor subscribes to at once, so that an answer given later reaches it
   * synchronously (no promise, no tick: a replay takes no time).
   */
  #call(
    src: string,
    input: unknown,
    signal: AbortSignal,
    toResult: (o: Outcome) => Outcome,
  ): PromiseLike<unknown> {
    const call: Call = { src, input, aborted: false, answered: false };
    signal.addEventListener('abort', () => (call.aborted = true), { once: true });
    this.calls.push(call);
    return {
      then: (onOk, onError) => {
        call.reply = (outcome) => {
          const result = toResult(outcome);
          if (result.ok) onOk?.(result.value);
          else onError?.(result.error);
        };
        return undefined as never;
      },
    };
  }
}
