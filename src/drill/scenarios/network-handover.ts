import { attemptsOf } from '../drill-harness.js';
import { manualConnectivity } from '../../connectivity/manual-connectivity.js';
import { originConfig, reply, type Behaviour } from '../drill-origin.js';
import type { DrillScenario } from '../drill-scenario.js';

/**
 * The device switches from Wi-Fi to cellular (the connectivity hint `changed`) while a GET and a keyless POST
 * are in flight. The GET's socket belongs to the old network and will never answer: it is ended and sent again
 * at once, over a new connection (the transport's pool was dropped), and succeeds long before its attempt
 * timeout. The POST may already have reached the server, so it is left alone and ends with the server's own
 * answer. Neither attempt counts against the primary: with suspectAfter 1, one counted failure would make it
 * `suspect`.
 */
export const networkHandover: DrillScenario = {
  name: 'network-handover',
  title: 'Wi-Fi to cellular with a read and a write in flight',
  expected:
    'the network changes at 1 s: the hanging GET is sent again at once on a new connection and succeeds at 1 s (not at its 5 s timeout); the keyless POST in flight is not cut and ends with its 201 at 2 s, applied once; health stays healthy',
  async run(drill) {
    const connectivity = manualConnectivity('online');
    let feedRequests = 0;
    // The first read of the feed hangs (its socket died with the Wi-Fi); the order is slow but does answer.
    const behave: Behaviour = (request) => {
      if (request.method === 'GET' && request.path === '/v1/feed' && ++feedRequests === 1)
        return reply.hang();
      if (request.method === 'POST') return reply.hang({ apply: true });
      return reply.ok(request.method === 'GET' ? 200 : 201);
    };
    const primary = await drill.origin('primary', behave);
    const backup = await drill.origin('backup');
    const client = drill.client({
      origins: [originConfig(primary), originConfig(backup)],
      connectivity,
      policy: { health: { suspectAfter: 1 } },
    });
    const { attemptMs } = client.policy.timeouts;

    // Three reads at once leave three keep-alive connections in the pool, as an app that has been running would
    // have: the GET and the POST take two, one stays idle, and only the reset keeps the re-sent GET off it.
    await drill.runAll(client, [{ path: '/v1/profile' }, { path: '/v1/settings' }, { path: '/v1/inbox' }]);
    const read = client.request({ path: '/v1/feed' });
    const write = client.request({ method: 'POST', path: '/v1/orders', body: '{"item":42}' });
    const startedAt = drill.clock.now();
    await drill.advance(1_000);
    const before = [...primary.served];
    drill.check(
      'before the change: the GET hangs on the old network, the POST is with the server',
      before.some((s) => s.method === 'GET' && s.reply === 'hang') &&
        before.some((s) => s.method === 'POST' && s.reply === 'hang applied'),
      `the primary saw ${before.map((s) => `${s.method} ${s.reply}`).join(', ')}`,
    );

    const changedAt = drill.clock.now();
    drill.mark('network changed');
    connectivity.set('changed');
    const readOutcome = await drill.drive(read);
    drill.recordOutcome(readOutcome);

    const resent = primary.served.find(
      (s) => s.method === 'GET' && s.path === '/v1/feed' && s.n > before.length,
    );
    drill.check(
      'the GET is sent again at once, with no backoff wait',
      resent?.at === changedAt && drill.waitsMs().length === 0,
      `sent again at ${resent?.at} ms (change at ${changedAt} ms), ${drill.waitsMs().length} waits`,
    );
    const oldConnections = Math.max(...before.map((s) => s.connection));
    drill.check(
      'over a new connection: no pooled connection of the old network is reused',
      resent !== undefined && resent.connection > oldConnections,
      `connection ${resent?.connection}; the old network had ${oldConnections}`,
    );
    const readEnded = drill.events.find((e) => e.type === 'succeeded' && e.path === '/v1/feed');
    drill.check(
      `the GET succeeds on attempt 2 at the change, long before its ${attemptMs / 1_000} s attempt timeout`,
      readOutcome.status === 'succeeded' &&
        attemptsOf(readOutcome) === 2 &&
        readEnded?.at === changedAt &&
        changedAt - startedAt < attemptMs,
      `${readOutcome.status} after ${attemptsOf(readOutcome)} attempts at ${readEnded?.at} ms`,
    );
    const cut = drill.events.find((e) => e.type === 'attempt-failed' && e.path === '/v1/feed');
    drill.expectEqual(
      'its first attempt ends as connection-lost across the change (not held against the primary)',
      cut?.type === 'attempt-failed' ? [cut.failureClass, cut.acrossChange, cut.origin] : [],
      ['connection-lost', true, 'primary'],
    );

    await drill.advance(1_000);
    const order = primary.served.find((s) => s.method === 'POST');
    const answeredAt = drill.clock.now();
    primary.answer(order?.n ?? 0, 201);
    const writeOutcome = await drill.drive(write);
    drill.recordOutcome(writeOutcome);
    drill.check(
      'the POST in flight is not cut: it ends with the server’s 201, after the change, on attempt 1',
      writeOutcome.status === 'succeeded' &&
        writeOutcome.response.status === 201 &&
        attemptsOf(writeOutcome) === 1 &&
        drill.events.some((e) => e.type === 'succeeded' && e.method === 'POST' && e.at === answeredAt),
      `${writeOutcome.status}${writeOutcome.status === 'deferred' ? '' : ` after ${writeOutcome.attempts} attempts`}`,
    );
    drill.expectEqual(
      'the primary got the POST once and applied it once',
      [primary.served.filter((s) => s.method === 'POST').length, primary.writesApplied],
      [1, 1],
    );

    const later = await drill.run(client, { path: '/v1/feed' });
    const laterServed = primary.served.at(-1);
    drill.check(
      'a later read does not ride the connection the POST used on the old network',
      later.status === 'succeeded' &&
        laterServed !== undefined &&
        laterServed.connection !== order?.connection,
      `the later read used connection ${laterServed?.connection}, the POST ${order?.connection}`,
    );
    drill.expectEqual(
      'health is unchanged: healthy on the primary, no health-changed event, the backup untouched',
      [
        client.health().state,
        client.health().activeOrigin,
        drill.events.filter((e) => e.type === 'health-changed').length,
        backup.served.length,
      ],
      ['healthy', 'primary', 0, 0],
    );
  },
};
