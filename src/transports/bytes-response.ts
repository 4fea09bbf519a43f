/**
 * @internal
 * A WHATWG `Response` over a body already read into memory, that answers `text()`, `json()`, `arrayBuffer()`
 * and `bytes()` from those bytes directly.
 *
 * A transport reads a short body within the attempt (buffered-response.ts). Handing it on as
 * `new Response(bytes)` made fetch (undici) wrap the bytes in a new `ReadableStream` and read them back
 * through it at the app's `json()`: about 20 µs a response on Node 20, more than failwise's engine spends on
 * the whole request, and half the throughput of raw fetch on a loopback JSON API (docs/benchmarks.md, section
 * 4). This class is still a `Response` (`instanceof`, `status`, `headers`, `ok`, `clone()` all as before), and
 * reads as one: a body read once, `bodyUsed` after, a second read rejected with a `TypeError`. What needs a
 * stream (`body`, `blob()`, `formData()`) gets one from a plain `Response` made over the bytes at that moment,
 * which answers every read from then on. test/transports/bytes-response.test.ts holds it to a plain `Response`
 * over the same bytes, operation by operation.
 *
 * Its state is kept under symbols, not `#private` fields (React Native's Babel turns those into WeakMap
 * lookups, docs/design.md) and not string keys: `JSON.stringify` and `Object.keys` of it are what they are of
 * any `Response`.
 */

const BYTES = Symbol('failwise.bytes');
const STREAMED = Symbol('failwise.streamed');

let utf8: TextDecoder | undefined;
/** UTF-8 decode as fetch's `text()` does it: a leading BOM dropped, a bad sequence replaced (U+FFFD). */
const decode = (bytes: Uint8Array): string => (utf8 ??= new TextDecoder()).decode(bytes);

/** An `ArrayBuffer` of exactly these bytes: their own buffer when they fill it, else a copy. */
function bufferOf(bytes: Uint8Array<ArrayBuffer>): ArrayBuffer {
  const { buffer, byteOffset, byteLength } = bytes;
  // A Node Buffer may be a slice of a shared pool: only a view of a whole ArrayBuffer may hand it over.
  return byteOffset === 0 && byteLength === buffer.byteLength
    ? buffer
    : buffer.slice(byteOffset, byteOffset + byteLength);
}

export class BytesResponse extends Response {
  /** The body, until a read takes it (or a stream is made over it); undefined after. */
  private [BYTES]: Uint8Array<ArrayBuffer> | undefined;
  /** The plain `Response` made over the bytes once something needed a stream; it answers every read after. */
  private [STREAMED]: Response | undefined;

  /** `bytes` become this response's own: the caller keeps no other reference to them. */
  constructor(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit) {
    super(null, init);
    this[BYTES] = bytes;
    this[STREAMED] = undefined;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.streamed().body;
  }

  override get bodyUsed(): boolean {
    const streamed = this[STREAMED];
    return streamed === undefined ? this[BYTES] === undefined : streamed.bodyUsed;
  }

  override text(): Promise<string> {
    return this.fromBytes() ? this.read(decode) : this.streamed().text();
  }

  override json(): Promise<unknown> {
    return this.fromBytes()
      ? this.read((bytes) => JSON.parse(decode(bytes)) as unknown)
      : this.streamed().json();
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.fromBytes() ? this.read(bufferOf) : this.streamed().arrayBuffer();
  }

  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.fromBytes() ? this.read((bytes) => new Uint8Array(bufferOf(bytes))) : this.streamed().bytes();
  }

  override blob(): Promise<Blob> {
    return this.streamed().blob();
  }

  override formData(): Promise<FormData> {
    return this.streamed().formData();
  }

  /** A response of its own over a copy of the bytes, as fetch's tees the stream. */
  override clone(): Response {
    return this.fromBytes() ? new BytesResponse(this[BYTES]!.slice(), this.init()) : this.streamed().clone();
  }

  /**
   * Whether a read is answered from the bytes: they are here, and no stream has been made over them. Otherwise
   * the streamed response answers, and once the body is used it is a used `Response`: a second read, or a clone,
   * then fails with the runtime's own `TypeError`, word for word.
   */
  private fromBytes(): boolean {
    return this[STREAMED] === undefined && this[BYTES] !== undefined;
  }

  /** Takes the bytes for one read. */
  private read<T>(convert: (bytes: Uint8Array<ArrayBuffer>) => T): Promise<T> {
    const bytes = this[BYTES]!;
    this[BYTES] = undefined;
    // Bad JSON rejects with JSON.parse's SyntaxError; the read still used the body, as fetch's does.
    return new Promise((resolve) => resolve(convert(bytes)));
  }

  /**
   * The plain `Response` over the bytes, made the first time a stream is needed. After a read has taken them it
   * is made over nothing and read at once, so that it is used too (its `body` locked, its reads rejected).
   */
  private streamed(): Response {
    let streamed = this[STREAMED];
    if (streamed === undefined) {
      const bytes = this[BYTES];
      this[BYTES] = undefined;
      streamed = new Response(bytes ?? new Uint8Array(0), this.init());
      if (bytes === undefined) streamed.arrayBuffer().catch(() => undefined);
      this[STREAMED] = streamed;
    }
    return streamed;
  }

  private init(): ResponseInit {
    return { status: this.status, statusText: this.statusText, headers: this.headers };
  }
}

/** The last `Response.prototype` checked, and the answer: a test (or a polyfill) may replace the global. */
let checked: { prototype: unknown; answer: boolean } | undefined;

/**
 * Whether this runtime's `Response` can be answered from bytes so: a `TextDecoder`, and `body` and `bodyUsed` as
 * accessors on the prototype, as in browsers, Node, Deno and Bun. React Native's fetch (the whatwg-fetch polyfill)
 * sets `bodyUsed` on each instance, which the accessor here would refuse; there a plain `Response` is made.
 */
export function canAnswerFromBytes(): boolean {
  if (typeof Response !== 'function' || typeof TextDecoder !== 'function') return false;
  const { prototype } = Response;
  if (checked?.prototype !== prototype) {
    const accessor = (name: string) =>
      typeof Object.getOwnPropertyDescriptor(prototype, name)?.get === 'function';
    checked = { prototype, answer: accessor('body') && accessor('bodyUsed') };
  }
  return checked.answer;
}
