// Byte bodies in a key-value store, which keeps strings only. Written out rather than `btoa`/`atob` or Node's
// Buffer: React Native's Hermes had no `btoa` before 0.74, and Buffer is Node's. Standard alphabet, with padding.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUES = new Map([...ALPHABET].map((char, value) => [char, value]));

/**
 * `bytes` as base64 (RFC 4648, with `=` padding).
 * @internal
 */
export function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a = 0, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const triple = (a << 16) | (b << 8) | c;
    const left = bytes.length - i;
    text += ALPHABET[(triple >> 18) & 63]! + ALPHABET[(triple >> 12) & 63]!;
    text += left > 1 ? ALPHABET[(triple >> 6) & 63]! : '=';
    text += left > 2 ? ALPHABET[triple & 63]! : '=';
  }
  return text;
}

/**
 * The bytes of base64 `text`, or `undefined` when it is not what `toBase64` writes (a stored value that was
 * changed or cut must not pass for a body).
 * @internal
 */
export function fromBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = new Uint8Array((text.length / 4) * 3 - padding);
  let at = 0;
  for (let i = 0; i < text.length; i += 4) {
    let triple = 0;
    for (let j = 0; j < 4; j++) {
      const char = text[i + j]!;
      const last = i + 4 === text.length;
      const value = char === '=' && last && j >= 4 - padding ? 0 : VALUES.get(char);
      if (value === undefined) return undefined;
      triple = (triple << 6) | value;
    }
    for (const shift of [16, 8, 0]) if (at < bytes.length) bytes[at++] = (triple >> shift) & 255;
  }
  return bytes;
}
