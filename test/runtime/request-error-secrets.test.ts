import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import { RequestError } from '../../src/errors/request-error.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { respond, scriptedTransport } from '../helpers/scripted-transport.js';

// The host's Headers error quotes the bad value (undici: `"Bearer …" is an invalid header value`), and a
// header value may be a token: the RequestError keeps neither in its message nor as its cause (rule 9).
describe('a header value the host refuses', () => {
  it('is a RequestError naming the header, with no trace of the value in its message or cause', async () => {
    const clock = simulatedClock();
    const transport = scriptedTransport(clock, [{ reply: respond(200) }]);
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport,
    });

    const error: unknown = await client
      .request({ path: '/v1/items', headers: { authorization: 'Bearer s3cr3t-token\n1' } })
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).message).toMatch(
      /^request\.headers\["authorization"\]: its value is not a valid header value/,
    );
    const everything = [String(error), (error as Error).stack, String((error as Error).cause)].join('\n');
    expect(everything).not.toContain('s3cr3t');
    expect((error as Error).cause).toBeUndefined();
    expect(transport.calls).toHaveLength(0);
    await client.close();
  });
});
