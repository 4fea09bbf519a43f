import type { AttemptOutput } from '../../machines/request/request.types.js';
import type { ClassifiedResult } from './classify-attempt.js';
import type { RequestHost } from './request-run.js';

/**
 * An attempt's transport promise as the machine's transport actor answers it: `attemptOutput` turns the transport's
 * result into the machine's output (when it came, with which credentials) inside the one reaction that hands it
 * on. A promise chained with `then(stamp)` would be a promise and a reaction more per attempt, about 2 µs on
 * Hermes, whose `Promise` is bytecode rather than native; the executor calls `then` on this object once.
 */
export class StampedAttempt implements PromiseLike<AttemptOutput> {
  constructor(
    private readonly sent: PromiseLike<ClassifiedResult>,
    /** The client's clock, and its send slots, which hear each answer of `origin` in the same reaction. */
    private readonly host: Pick<RequestHost, 'clock' | 'throttles'>,
    private readonly authGeneration: number | undefined,
    private readonly origin: string,
  ) {}

  then<A = AttemptOutput, B = never>(
    onFulfilled?: ((output: AttemptOutput) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    const { host, authGeneration, origin } = this;
    return this.sent.then((result) => {
      const at = host.clock.now();
      if (host.throttles !== undefined && result.kind === 'response')
        host.throttles.observe(origin, result.response.status, result.response.headers, at);
      const output = attemptOutput(result, at, authGeneration);
      return (onFulfilled ? onFulfilled(output) : output) as A | PromiseLike<A>;
    }, onRejected);
  }
}

/**
 * A transport's result as the machine reads it: when it came (`at`), and the credentials' generation it was sent
 * with. The result itself gains the two fields: the machine reads it within the step it arrives in and keeps
 * none of it but its response, so the transport's object serves as the output (a copy of its keys costs Hermes,
 * with no JIT, more than the rest of the reaction). A result that cannot take them (frozen) is copied.
 */
function attemptOutput(
  result: ClassifiedResult,
  at: number,
  authGeneration: number | undefined,
): AttemptOutput {
  const output = result as AttemptOutput;
  try {
    output.at = at;
    output.authGeneration = authGeneration;
    return output;
  } catch {
    return { ...result, at, authGeneration };
  }
}
