import type { Clock } from '../clock/clock.js';
import { StateError } from '../errors/state-error.js';
import type { TimerTarget, Timers } from './timers.js';
import { armZeroDelay, clearZeroDelay, type ZeroDelay } from './zero-delay.js';

/** One timer in the queue: the target itself, whose `index` is its place in the heap (-1 once it fired or was cleared). */
type Entry = TimerTarget;

/**
 * Every lean run's delays on one host timer. Each request arms two timers (its budget and its attempt's timeout)
 * and clears both when it succeeds; on the host (Node's `setTimeout`) that is two timer objects and their list
 * bookkeeping per request. Here a timer is its target, kept in a binary heap ordered by due time, then by the order
 * they were armed in (no object of its own), and the host timer is armed only for the earliest.
 *
 * The host timer is not cleared when entries are cleared before it fires: it fires later, finds nothing due and
 * is armed again for the earliest entry, or, the heap empty, for nothing. While the heap is empty it is
 * `unref()`ed where the host allows (Node), so an idle queue does not keep a process alive, and re-`ref()`ed
 * when an entry comes. Where the host cannot unref (browsers, React Native) it stays armed too: a request
 * that arms and clears its timers then costs no host timer call at all (on React Native each is a call into
 * native code), and the one left armed fires once, at the latest when the last request's timeout would have,
 * and arms nothing. `quiesce()` clears it at once (a client's `close()`).
 *
 * Timers due at once run in the order they were armed, as with the host's timers. A queue orders its own
 * timers only: on a clock that other code also arms timers on, a timer of the queue and one of that code due at
 * the same instant may run in the other order than with a host timer each. That is why the client uses a queue
 * only on a clock with a monotonic time line, `systemClock` (engine/timers.ts), where no two real timers are
 * ordered to the millisecond anyway; a simulated clock keeps one timer per delay, so tests and the drill see
 * every timer in armed order.
 */
export class TimerQueue implements Timers {
  private heap: Entry[] = [];
  /** The most entries the heap has held since it was last made anew. */
  private peak = 0;
  private seq = 0;
  /** The host timer, when armed, and when it was armed to fire. */
  private host: unknown;
  private hostDue = Infinity;
  /** Whether the host timer is `unref()`ed now (the heap is empty). */
  private idle = false;
  /** Whether the host timer can be `unref()`ed (Node's can; browsers' and React Native's cannot): asked once per host timer. */
  private hostUnrefs = false;

  /**
   * @param clock arms the host timer.
   * @param now the time line that dues are kept on: a monotonic one (`performance.now`) for real time, so that a
   *   wall clock set back or forward (a phone's time corrected) neither delays nor hastens a timer, exactly as
   *   with a host timer each.
   */
  constructor(
    private readonly clock: Clock,
    private readonly now: () => number = () => clock.now(),
  ) {}

  /** Timers armed and not yet fired or cleared. */
  get size(): number {
    return this.heap.length;
  }

  /**
   * Arms `target`; the handle to clear it with is the target itself. A wait of 0 ms (or less) is no entry: it
   * runs as a microtask (zero-delay.ts), with a handle of its own.
   */
  set(target: TimerTarget, delayMs: number): Entry | ZeroDelay {
    if (delayMs <= 0) return armZeroDelay(target);
    if (target.index !== -1) throw new StateError('TimerQueue: a timer target is armed twice at once');
    const heap = this.heap;
    const index = heap.length;
    const due = this.now() + delayMs;
    target.due = due;
    target.seq = this.seq++;
    target.index = index;
    heap.push(target);
    if (index >= this.peak) this.peak = index + 1;
    // Most timers are armed later than those armed before them: no walk up the heap for the first.
    if (index > 0) this.up(index);
    if (this.idle) this.wake();
    if (due < this.hostDue) this.arm();
    return target;
  }

  clear(handle: unknown): void {
    const entry = handle as Entry;
    // Not queued: fired or cleared already, or a 0 ms wait's.
    if (entry.index === -1) {
      clearZeroDelay(handle);
      return;
    }
    this.removeAt(entry.index);
    if (this.heap.length === 0) {
      if (this.peak > 64) this.release();
      if (this.hostUnrefs && !this.idle) this.rest();
    }
  }

  /** The host timer fired: runs every entry that is due, in order, then arms the host timer for the next. */
  private readonly fire = (): void => {
    // The host's timer says its delay has passed even when `now` lags it by a millisecond.
    const now = Math.max(this.now(), this.hostDue);
    this.host = undefined;
    this.hostDue = Infinity;
    this.idle = false;
    for (let top = this.heap[0]; top !== undefined && top.due <= now; top = this.heap[0]) {
      this.removeAt(0);
      try {
        top.fire();
      } catch (error) {
        // As a throwing host timer callback would: reported, and the other timers still run.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    if (this.heap.length > 0) this.arm();
    else this.release();
  };

  /**
   * An emptied heap that once held many entries (10,000 requests in flight) is made anew: an array keeps the room
   * it grew to, which would stay with an idle client.
   */
  private release(): void {
    if (this.peak <= 64) return;
    this.heap = [];
    this.peak = 0;
  }

  /** Arms the host timer for the earliest entry (clearing one armed for later), in whole milliseconds, never early. */
  private arm(): void {
    const first = this.heap[0]!;
    if (this.host !== undefined) this.clock.clearTimeout(this.host);
    this.hostDue = first.due;
    this.host = this.clock.setTimeout(this.fire, Math.max(0, Math.ceil(first.due - this.now())));
    this.hostUnrefs = typeof (this.host as { unref?: unknown } | undefined)?.unref === 'function';
    this.idle = false;
  }

  /** The heap is empty: the host timer stays armed, but must not keep the process alive where it can be told so. */
  private rest(): void {
    if (this.host === undefined || this.idle) return;
    const host = this.host as { unref?: () => void };
    if (typeof host.unref === 'function') {
      host.unref();
      this.idle = true;
    }
  }

  /** Clears the host timer when no entry is left: nothing stays armed once the queue's users are done. */
  quiesce(): void {
    if (this.heap.length > 0 || this.host === undefined) return;
    this.clock.clearTimeout(this.host);
    this.host = undefined;
    this.hostDue = Infinity;
    this.idle = false;
  }

  /** An entry came while the host timer rested: it keeps the process alive again. */
  private wake(): void {
    (this.host as { ref?: () => void }).ref?.();
    this.idle = false;
  }

  // ---- the binary heap, by (due, seq) ----

  private removeAt(index: number): void {
    const heap = this.heap;
    const removed = heap[index]!;
    const last = heap.pop()!;
    removed.index = -1;
    if (last === removed) return;
    heap[index] = last;
    last.index = index;
    this.up(index);
    this.down(last.index);
  }

  private up(index: number): void {
    const heap = this.heap;
    const entry = heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex]!;
      if (!before(entry, parent)) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  private down(index: number): void {
    const heap = this.heap;
    const entry = heap[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, entry)) break;
      heap[index] = heap[child]!;
      heap[index]!.index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}
