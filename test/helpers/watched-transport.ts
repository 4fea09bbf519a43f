import type { Transport } from '../../src/transports/transport.js';

const realTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A real transport (Node's fetch, failwise's default, to loopback origins), watched so that a test on a simulated
 * clock moves the clock only once nothing is on the wire: `idle()` resolves when no request is in flight for two
 * real ticks, and throws when one stays on the wire for 5 s of real time.
 */
export function watched(inner: Transport): { transport: Transport; idle: () => Promise<void> } {
  const onTheWire = new Set<Promise<unknown>>();
  const transport: Transport = {
    name: inner.name,
    send(request) {
      const sent = inner.send(request);
      onTheWire.add(sent);
      const done = () => void onTheWire.delete(sent);
      sent.then(done, done);
      return sent;
    },
  };
  const idle = async () => {
    for (let round = 0; round < 100; round++) {
      await realTick();
      if (onTheWire.size === 0) {
        await realTick();
        if (onTheWire.size === 0) return;
      }
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<'stuck'>((resolve) => {
        timer = setTimeout(() => resolve('stuck'), 5_000);
      });
      const result = await Promise.race([Promise.allSettled([...onTheWire]), stuck]);
      clearTimeout(timer);
      if (result === 'stuck') throw new Error('a request stayed on the wire for 5 s of real time');
    }
    throw new Error('the network never went quiet');
  };
  return { transport, idle };
}
