/**
 * @internal
 * Certificate pins as the Node transports check them: SPKI SHA-256 pins written the way OkHttp writes
 * them (`sha256/` + the base64 of the SHA-256 of a certificate's DER SubjectPublicKeyInfo), matched
 * against every certificate of the chain the handshake presented (leaf, intermediates, the trusted
 * root), as OkHttp's CertificatePinner does. Node only: it hashes with `node:crypto`.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, PeerCertificate } from 'node:tls';

/** The code of a handshake whose chain matched none of the origin's pins (class `tls`). */
export const PIN_MISMATCH_CODE = 'CERT_PIN_MISMATCH';
/**
 * The code of a handshake whose chain could not be read to check the pins: a resumed TLS session shows
 * no certificates. Failing is the safe side: sending would skip the pins.
 */
export const PIN_UNVERIFIABLE_CODE = 'CERT_PIN_UNVERIFIABLE';

/** The pin of one public key: `sha256/` + base64(SHA-256(DER SubjectPublicKeyInfo)). */
export function pinOfPublicKey(spkiDer: Uint8Array): string {
  return `sha256/${createHash('sha256').update(spkiDer).digest('base64')}`;
}

/**
 * The DER SubjectPublicKeyInfo of each certificate of a chain as `getPeerCertificate(true)` gives it,
 * leaf first. A self-signed root is its own issuer, which ends the walk. Taken from each certificate's
 * DER (`raw`): the chain's `pubkey` field is not the SPKI (for an EC key it is the bare point).
 */
export function publicKeysOf(leaf: PeerCertificate | DetailedPeerCertificate): Buffer[] {
  const seen: PeerCertificate[] = [];
  const keys: Buffer[] = [];
  let cert: PeerCertificate | undefined = leaf;
  while (cert?.raw !== undefined && !seen.includes(cert)) {
    seen.push(cert);
    keys.push(new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' }));
    cert = (cert as Partial<DetailedPeerCertificate>).issuerCertificate;
  }
  return keys;
}

/** What a presented chain says about a pin set. */
export type PinCheck = 'match' | 'mismatch' | 'unverifiable';

/** Whether any certificate of the chain that starts at `leaf` has a public key among `pins`. */
export function checkPins(
  leaf: PeerCertificate | DetailedPeerCertificate | undefined,
  pins: readonly string[],
): PinCheck {
  const keys = leaf === undefined ? [] : publicKeysOf(leaf);
  if (keys.length === 0) return 'unverifiable';
  return keys.some((key) => pins.includes(pinOfPublicKey(key))) ? 'match' : 'mismatch';
}

/** One key per pin set, whatever the order the pins were given in (it names the transport's agents). */
export function pinSetKey(pins: readonly string[]): string {
  return [...new Set(pins)].sort().join(',');
}
