/**
 * @internal
 * Node only: a WHATWG `Response` over a body already read into memory, that answers `text()`, `json()`,
 * `arrayBuffer()` and `bytes()` from those bytes directly. The Node transports (the Node entry's `fetchTransport`
 * and `nodeHttpTransport`) hand it on; everywhere else a body read within the attempt becomes
 * `new Response(bytes)`.
 *
 * Why: handed on as `new Response(bytes)`, the bytes were wrapped by undici in a new `ReadableStream` and read
 * back through it at the app's `json()`, about 20 µs a response on Node 20 (docs/design.md). This class is still a
 * `Response` (`instanceof`, `status`, `headers`, `ok`, `clone()` as before) and reads as one: a body read once,
 * `bodyUsed` after, a second read rejected with the runtime's own `TypeError`. What needs a stream (`body`,
 * `blob()`, `formData()`) gets one from a plain `Response` made over the bytes at that moment, which answers every
 * read from then on. test/transports/bytes-response.test.ts holds it to a plain `Response` over the same bytes,
 * step by step.
 *
 * Why Node only: the class is made with `super(null)`, so the runtime's own internal body is empty. Code that
 * reads that slot rather than `body` or `text()` would see nothing: in browsers the Cache API,
 * `WebAssembly.instantiateStreaming` and a service worker's `respondWith`; in Deno and Bun a response returned
 * from a server handler. Node has none of these (its `instantiateStreaming` reads `body`). Only a call of
 * `Response.prototype.text` (or another of its methods) on the instance itself would still see the empty slot.
 *
 * Its state is kept under symbols, not `#private` fields (docs/design.md) and not string keys: `JSON.stringify`
 * and `Object.keys` of it are what they are of any `Response`.
 */

const BYTES = Symbol('failwise.bytes');
const STREAMED = Symbol('failwise.streamed');

let utf8: TextDecoder | undefined;
/** UTF-8 decode as fetch's `text()` does it: a leading BOM dropped, a bad sequence replaced (U+FFFD). */
const decode = (bytes: Uint8Array): string => (utf8 ??= new TextDecoder()).decode(bytes);

/**
 * The bytes as a plain `Uint8Array` filling its own `ArrayBuffer`: a Node Buffer cut from the shared pool is copied
 * out of it (a Buffer's `slice` would share it).
 */
const own = (bytes: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? new Uint8Array(bytes.buffer)
    : new Uint8Array(bytes);

/** The class over the runtime's `Response` of the moment (made when first needed, so importing needs none). */
function defineBytesResponse(Base: typeof Response) {
  class BytesResponse extends Base {
    /** The body, until a read takes it (or a stream is made over it); undefined after. */
    private [BYTES]: Uint8Array<ArrayBuffer> | undefined;
    /** The plain `Response` made over the bytes once something needed a stream; it answers every read after. */
    private [STREAMED]: Response | undefined;

    /** `bytes` become this response's own: the caller keeps no other reference to them. */
    constructor(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit) {
      super(null, init);
      this[BYTES] = own(bytes);
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
      return this.fromBytes() ? this.read((bytes) => bytes.buffer) : this.streamed().arrayBuffer();
    }

    override bytes(): Promise<Uint8Array<ArrayBuffer>> {
      return this.fromBytes() ? this.read((bytes) => bytes) : this.streamed().bytes();
    }

    override blob(): Promise<Blob> {
      return this.streamed().blob();
    }

    override formData(): Promise<FormData> {
      return this.streamed().formData();
    }

    /** A response of its own over a copy of the bytes, as fetch's tees the stream. */
    override clone(): Response {
      return this.fromBytes()
        ? new BytesResponse(new Uint8Array(this[BYTES]!), this.init())
        : this.streamed().clone();
    }

    /**
     * Whether a read is answered from the bytes: they are here, and no stream has been made over them. Otherwise
     * the streamed response answers, and once the body is used it is a used `Response`: a second read, or a
     * clone, then fails with the runtime's own `TypeError`, word for word.
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
     * The plain `Response` over the bytes, made the first time a stream is needed. After a read has taken them
     * it is made over nothing and read at once, so that it is used too (its `body` locked, its reads rejected).
     */
    private streamed(): Response {
      let streamed = this[STREAMED];
      if (streamed === undefined) {
        const bytes = this[BYTES];
        this[BYTES] = undefined;
        streamed = new Base(bytes ?? new Uint8Array(0), this.init());
        if (bytes === undefined) streamed.arrayBuffer().catch(() => undefined);
        this[STREAMED] = streamed;
      }
      return streamed;
    }

    private init(): ResponseInit {
      return { status: this.status, statusText: this.statusText, headers: this.headers };
    }
  }
  // Only the reads the runtime's Response has: `'bytes' in response` says what the runtime supports.
  if (typeof Base.prototype.bytes !== 'function') Reflect.deleteProperty(BytesResponse.prototype, 'bytes');
  return BytesResponse;
}

/**
 * The class over the current global `Response`, or undefined where responses are not answered from bytes: outside
 * Node (Bun and Deno run the Node entry too), without a `TextDecoder`, or where `body` and `bodyUsed` are not
 * accessors on `Response.prototype`. Made again if the global `Response` is replaced (a test, a polyfill).
 */
let made:
  { base: typeof Response; bytesResponse: ReturnType<typeof defineBytesResponse> | undefined } | undefined;

function bytesResponseClass(): ReturnType<typeof defineBytesResponse> | undefined {
  if (typeof Response !== 'function') return undefined;
  if (made?.base !== Response) {
    // Looked up along the prototype chain: a Response that subclasses the runtime's inherits its accessors.
    const accessor = (name: string): boolean => {
      for (
        let proto: object | null = Response.prototype;
        proto !== null;
        proto = Object.getPrototypeOf(proto) as object | null
      ) {
        const descriptor = Object.getOwnPropertyDescriptor(proto, name);
        if (descriptor !== undefined) return typeof descriptor.get === 'function';
      }
      return false;
    };
    const node =
      (globalThis as { process?: { release?: { name?: string } } }).process?.release?.name === 'node' &&
      !('Bun' in globalThis) &&
      !('Deno' in globalThis);
    made = {
      base: Response,
      bytesResponse:
        node && typeof TextDecoder === 'function' && accessor('body') && accessor('bodyUsed')
          ? defineBytesResponse(Response)
          : undefined,
    };
  }
  return made.bytesResponse;
}

/** A `Response` over `bytes` (which become its own): one that answers reads from them on Node, else a plain one. */
export function responseFromBytes(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit): Response {
  const BytesResponse = bytesResponseClass();
  return BytesResponse === undefined ? new Response(bytes, init) : new BytesResponse(bytes, init);
}

/** Whether `response` answers its reads from bytes (a test's question). */
export const answersFromBytes = (response: Response): boolean => STREAMED in response;
