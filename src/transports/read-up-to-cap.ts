/**
 * @internal
 * Reads a body of unknown length within the attempt, but no further than a cap: a body that ends by then is
 * whole in memory (and a connection lost before its end rejects the read, so the attempt fails); one that goes on
 * past it stops being read here, and what was read is handed over before the rest (src/transports/handed-over-body.ts).
 */

export type ReadUpToCap =
  /** The body ended within the cap: all of it. */
  | { complete: true; bytes: Uint8Array<ArrayBuffer> }
  /** The body went past the cap: the chunks read so far, in order; the reader holds the rest. */
  | { complete: false; read: Uint8Array[] };

/** Reads `reader` until the body ends or more than `capBytes` have come. Rejects as the reader's `read()` does. */
export async function readUpToCap(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  capBytes: number,
): Promise<ReadUpToCap> {
  const read: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { complete: true, bytes: concat(read, length) };
    read.push(value);
    length += value.byteLength;
    if (length > capBytes) return { complete: false, read };
  }
}

/** The chunks as one array of its own. */
function concat(chunks: readonly Uint8Array[], length: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
