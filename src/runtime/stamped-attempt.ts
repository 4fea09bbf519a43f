import type { AttemptOutput } from '../../machines/request/request.types.js';
import type { TransportResult } from '../policy/transport-result.js';

/**
 * An attempt's transport promise as the machine's transport actor answers it: `stamper.output` turns the transport's
 * result into the machine's output (when it came, with which credentials) inside the one reaction that hands it
 * on. A promise chained with `then(stamp)` would be a promise and a reaction more per attempt, about 2 µs on
 * Hermes, whose `Promise` is bytecode rather than native; the executor calls `then` on this object once.
 */
export class StampedAttempt implements PromiseLike<AttemptOutput> {
  constructor(
    private readonly sent: PromiseLike<TransportResult>,
    private readonly stamper: { output(result: TransportResult, authGeneration?: number): AttemptOutput },
    private readonly authGeneration: number | undefined,
  ) {}

  then<A = AttemptOutput, B = never>(
    onFulfilled?: ((output: AttemptOutput) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    const { stamper, authGeneration } = this;
    return this.sent.then((result) => {
      const output = stamper.output(result, authGeneration);
      return (onFulfilled ? onFulfilled(output) : output) as A | PromiseLike<A>;
    }, onRejected);
  }
}
