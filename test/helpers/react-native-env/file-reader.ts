/**
 * A `FileReader` over Node's `Blob`, with the members whatwg-fetch calls (`readAsArrayBuffer`, `readAsText`,
 * `onload`, `onerror`, `result`). React Native's own FileReader reads through a native module, so it cannot run in
 * Node; this one answers the same calls from the Blob's bytes. Its presence is what makes whatwg-fetch ask
 * XMLHttpRequest for `blob` responses, as it does in an app.
 */
export class BlobFileReader {
  result: ArrayBuffer | string | null = null;
  error: unknown = null;
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;

  readAsArrayBuffer(blob: Blob): void {
    this.settle(blob.arrayBuffer());
  }

  readAsText(blob: Blob): void {
    this.settle(blob.text());
  }

  private settle(read: Promise<ArrayBuffer | string>): void {
    read.then(
      (result) => {
        this.result = result;
        this.onload?.();
      },
      (error: unknown) => {
        this.error = error;
        this.onerror?.();
      },
    );
  }
}
