import { describe, expect, it } from 'vitest';
import { simulatedClock } from '../../src/clock/simulated-clock.js';
import type { ConnectivityHint } from '../../src/connectivity/connectivity-source.js';
import { ArgumentError } from '../../src/errors/argument-error.js';
import { netInfoConnectivity, type NetInfoStateLike } from '../../src/react-native.js';
import { createFailoverClient } from '../../src/runtime/create-failover-client.js';
import { respond, scriptedTransport } from '../helpers/scripted-transport.js';

/** An object of the NetInfo module's shape: `report` plays what the native side would send. */
function fakeNetInfo() {
  const listeners = new Set<(state: NetInfoStateLike) => void>();
  let added = 0;
  return {
    addEventListener(listener: (state: NetInfoStateLike) => void) {
      added++;
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    report: (type: string, isConnected: boolean | null, isInternetReachable: boolean | null = null) => {
      for (const listener of [...listeners]) listener({ type, isConnected, isInternetReachable });
    },
    listening: () => listeners.size,
    added: () => added,
  };
}

describe('netInfoConnectivity (failwise/react-native)', () => {
  it('is unknown until NetInfo reports, then online or offline by isConnected', () => {
    const netInfo = fakeNetInfo();
    const source = netInfoConnectivity(netInfo);
    const hints: ConnectivityHint[] = [];
    source.subscribe((hint) => hints.push(hint));
    expect(source.current()).toBe('unknown');
    netInfo.report('unknown', null);
    expect(source.current()).toBe('unknown');
    netInfo.report('wifi', true);
    expect(source.current()).toBe('online');
    netInfo.report('none', false);
    expect(source.current()).toBe('offline');
    netInfo.report('cellular', true);
    expect(source.current()).toBe('online');
    expect(hints).toEqual(['online', 'offline', 'online']);
  });

  it('says changed when the network type changes while connected (wifi to cellular), and only then', () => {
    const netInfo = fakeNetInfo();
    const source = netInfoConnectivity(netInfo);
    const hints: ConnectivityHint[] = [];
    source.subscribe((hint) => hints.push(hint));
    netInfo.report('wifi', true);
    netInfo.report('wifi', true); // the same network reported again
    netInfo.report('cellular', true);
    netInfo.report('cellular', false);
    netInfo.report('wifi', true); // back online: online, not changed
    expect(hints).toEqual(['online', 'changed', 'offline', 'online']);
  });

  it("counts NetInfo's failed reachability probe as offline, unless told not to; a probe not made yet never", () => {
    const netInfo = fakeNetInfo();
    const source = netInfoConnectivity(netInfo);
    source.subscribe(() => undefined);
    netInfo.report('wifi', true, null);
    expect(source.current()).toBe('online');
    netInfo.report('wifi', true, false);
    expect(source.current()).toBe('offline');
    netInfo.report('wifi', true, true);
    expect(source.current()).toBe('online');

    const blocked = fakeNetInfo();
    const ignoring = netInfoConnectivity(blocked, { reachability: false });
    ignoring.subscribe(() => undefined);
    blocked.report('wifi', true, false);
    expect(ignoring.current()).toBe('online');
    expect(() => netInfoConnectivity(blocked, { reachability: 'no' as never })).toThrow(
      new ArgumentError('netInfoConnectivity', 'options.reachability', 'expected a boolean'),
    );
  });

  it('refuses options that are not an object', () => {
    const make = netInfoConnectivity as (netInfo: unknown, options: unknown) => unknown;
    expect(() => make(fakeNetInfo(), null)).toThrow(
      new ArgumentError('netInfoConnectivity', 'options', 'expected an object, got null'),
    );
    expect(() => make(fakeNetInfo(), 'wifi')).toThrow(
      'netInfoConnectivity: options: expected an object, got "wifi"',
    );
  });

  it('listens to NetInfo from the first subscriber to the last, and forgets its state after', () => {
    const netInfo = fakeNetInfo();
    const source = netInfoConnectivity(netInfo);
    expect(netInfo.listening()).toBe(0);
    const stopA = source.subscribe(() => undefined);
    const stopB = source.subscribe(() => undefined);
    expect([netInfo.added(), netInfo.listening()]).toEqual([1, 1]);
    netInfo.report('wifi', true);
    stopA();
    stopA(); // twice is harmless
    expect(netInfo.listening()).toBe(1);
    stopB();
    expect(netInfo.listening()).toBe(0);
    expect(source.current()).toBe('unknown');
  });

  it('tells every listener even when one throws', () => {
    const netInfo = fakeNetInfo();
    const source = netInfoConnectivity(netInfo);
    const heard: ConnectivityHint[] = [];
    source.subscribe(() => {
      throw new Error('listener bug');
    });
    source.subscribe((hint) => heard.push(hint));
    netInfo.report('wifi', false);
    expect(heard).toEqual(['offline']);
  });

  it('refuses what is not the NetInfo module', () => {
    expect(() => netInfoConnectivity({} as never)).toThrow(
      new ArgumentError(
        'netInfoConnectivity',
        'netInfo',
        "expected the NetInfo module (import NetInfo from '@react-native-community/netinfo')",
      ),
    );
  });

  it('drives a client: offline ends a request at once with nothing sent (rule 6), online lets it through', async () => {
    const netInfo = fakeNetInfo();
    const clock = simulatedClock();
    const transport = scriptedTransport(clock, [{ reply: respond(200) }]);
    const client = createFailoverClient({
      origins: [{ id: 'primary', url: 'https://api.example.test' }],
      clock,
      transport,
      connectivity: netInfoConnectivity(netInfo),
    });
    netInfo.report('none', false);
    expect(await client.request({ path: '/x' })).toMatchObject({
      status: 'failed',
      reason: 'offline',
      attempts: 0,
    });
    netInfo.report('wifi', true);
    const outcome = client.request({ path: '/x' });
    await clock.runAll();
    expect(await outcome).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(transport.calls).toHaveLength(1);
    await client.close();
    expect(netInfo.listening()).toBe(0); // close() let NetInfo go
  });
});
