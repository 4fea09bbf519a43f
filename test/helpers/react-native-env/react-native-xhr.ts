/**
 * An `XMLHttpRequest` for Node that answers as React Native's does, for whatwg-fetch to run over: the `xhr2`
 * package (XMLHttpRequest over node:http) with what React Native's native networking adds.
 *
 * - `responseType = 'blob'` gives a `Blob` (React Native's XHR supports it, and whatwg-fetch asks for it whenever
 *   `Blob` and `FileReader` exist); xhr2 does not know that type, so the body is taken as bytes and wrapped.
 * - A gzip'd body arrives decoded, without `Content-Encoding` or `Content-Length`: what OkHttp (Android) and
 *   NSURLSession (iOS) leave after decoding it, so most JSON APIs reach the app with no length.
 *
 * It overrides xhr2's `_parseResponse` (where xhr2 turns the received bytes into `response`) and
 * `getAllResponseHeaders`; nothing else of xhr2 changes.
 */
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';

const require = createRequire(import.meta.url);

/** The part of xhr2's class this file uses. */
interface Xhr2 {
  responseType: string;
  response: unknown;
  responseText: string | null;
  getResponseHeader(name: string): string | null;
  getAllResponseHeaders(): string;
  _parseResponse(): void;
}

const Xhr2Class = require('xhr2') as new () => Xhr2;

export class ReactNativeXMLHttpRequest extends Xhr2Class {
  override _parseResponse(): void {
    const wanted = this.responseType;
    this.responseType = 'buffer';
    super._parseResponse();
    this.responseType = wanted;
    let bytes = this.response as Buffer;
    if (this.isGzipped()) bytes = gunzipSync(bytes);
    if (wanted === 'blob') {
      this.responseText = null;
      this.response = new Blob([new Uint8Array(bytes)], {
        type: this.getResponseHeader('content-type') ?? '',
      });
    } else if (wanted === 'arraybuffer') {
      this.responseText = null;
      this.response = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    } else {
      this.responseText = bytes.toString('utf8');
      this.response = this.responseText;
    }
  }

  override getResponseHeader(name: string): string | null {
    return this.isGzipped() && /^content-(encoding|length)$/i.test(name)
      ? null
      : super.getResponseHeader(name);
  }

  override getAllResponseHeaders(): string {
    const all = super.getAllResponseHeaders();
    if (!this.isGzipped()) return all;
    return all
      .split('\r\n')
      .filter((line) => !/^content-(encoding|length):/i.test(line))
      .join('\r\n');
  }

  private isGzipped(): boolean {
    return /^\s*gzip\s*$/i.test(super.getResponseHeader('content-encoding') ?? '');
  }
}
