import { describe, expect, it } from 'vitest';
import { canonicalOrigin } from '../../src/runtime/origin-url.js';

describe('canonicalOrigin', () => {
  it.each([
    ['HTTP://API.Example.COM/V1/Items?Q=A#F', 'http://api.example.com/V1/Items?Q=A#F'],
    ['HTTPS://API.EXAMPLE.COM', 'https://api.example.com'],
    ['http://api.example.com:80/x', 'http://api.example.com/x'],
    ['https://api.example.com:443', 'https://api.example.com'],
    ['https://api.example.com:80/x', 'https://api.example.com:80/x'],
    ['http://API.example.com:/x', 'http://api.example.com/x'],
    ['http://User:Pass@API.example.com:8080?x', 'http://User:Pass@api.example.com:8080?x'],
    ['HTTP://[::1]:3000/x', 'http://[::1]:3000/x'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
  ])('makes %s %s', (given, expected) => {
    expect(canonicalOrigin(given)).toBe(expected);
  });

  it('leaves what is not scheme://... as it is, for URL to judge', () => {
    expect(canonicalOrigin('/v1/Items')).toBe('/v1/Items');
    expect(canonicalOrigin('API.example.com/x')).toBe('API.example.com/x');
    expect(canonicalOrigin('mailto:A@B.com')).toBe('mailto:A@B.com');
  });

  it('is what a WHATWG URL makes of an http(s) URL, for its scheme, host and port', () => {
    for (const url of ['HTTP://API.Example.COM:80/V1', 'HTTPS://Api.Example.Com:8443/p?q']) {
      const parsed = new URL(url);
      const ours = new URL(canonicalOrigin(url));
      expect([ours.protocol, ours.host]).toEqual([parsed.protocol, parsed.host]);
      expect(canonicalOrigin(url).startsWith(parsed.origin)).toBe(true);
    }
  });
});
