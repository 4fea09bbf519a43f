import { describe, expect, it } from 'vitest';
import { pickFetchOptions, REQUEST_DEFAULTS } from '../../src/transports/fetch-options.js';

describe('pickFetchOptions', () => {
  it("skips a Request's members left null (whatwg-fetch's mode and referrer) as its defaults", () => {
    const whatwgRequest = { credentials: 'same-origin', mode: null, referrer: null, cache: 'no-store' };
    expect(pickFetchOptions(whatwgRequest, REQUEST_DEFAULTS)).toEqual({ cache: 'no-store' });
  });

  it("passes init's null members on, for checkFetchOptions to refuse", () => {
    expect(pickFetchOptions({ mode: null, keepalive: true })).toEqual({ mode: null, keepalive: true });
  });
});
