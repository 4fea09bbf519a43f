/**
 * A small PKI for certificate-pin tests, made with the `openssl` CLI in a temp directory that is
 * removed again: a CA, a leaf for 127.0.0.1 signed by it, and an unrelated key that nothing presents.
 * Each pin is computed by openssl too (`pkey -outform DER | dgst -sha256`), never by failwise's own
 * code, so a test that expects a pin to match checks failwise against an independent computation.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const openssl = (...args: string[]) => promisify(execFile)('openssl', args);
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface TestPki {
  /** The CA's certificate (PEM): pass it as nodeHttpTransport's `tls.ca`. */
  caCert: Buffer;
  /** The leaf's key and certificate (PEM), for `https.createServer`. */
  leaf: { key: Buffer; cert: Buffer };
  /** Pins (`sha256/…`) of the CA's key, the leaf's key and a key that no certificate here holds. */
  pins: { ca: string; leaf: string; unrelated: string };
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'failwise-pki-'));
  const at = (name: string) => join(dir, name);
  try {
    await openssl(
      'req',
      '-x509',
      ...EC,
      '-keyout',
      at('ca.key'),
      '-out',
      at('ca.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=failwise test CA',
    );
    await openssl('req', ...EC, '-keyout', at('leaf.key'), '-out', at('leaf.csr'), '-subj', '/CN=127.0.0.1');
    await writeFile(at('leaf.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
    await openssl(
      'x509',
      '-req',
      '-in',
      at('leaf.csr'),
      '-CA',
      at('ca.pem'),
      '-CAkey',
      at('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      at('leaf.ext'),
      '-out',
      at('leaf.pem'),
    );
    await openssl(
      'genpkey',
      '-algorithm',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-out',
      at('other.key'),
    );
    return {
      caCert: await readFile(at('ca.pem')),
      leaf: { key: await readFile(at('leaf.key')), cert: await readFile(at('leaf.pem')) },
      pins: {
        ca: await pinOfCertificate(at('ca.pem'), at),
        leaf: await pinOfCertificate(at('leaf.pem'), at),
        unrelated: await pinOfSpki(['-in', at('other.key'), '-pubout'], at),
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The pin of a certificate's public key, as `openssl x509 -pubkey` extracts it. */
async function pinOfCertificate(certPath: string, at: (name: string) => string): Promise<string> {
  await openssl('x509', '-in', certPath, '-pubkey', '-noout', '-out', at('pub.pem'));
  return pinOfSpki(['-pubin', '-in', at('pub.pem')], at);
}

/** `sha256/` + base64 of the SHA-256 of the DER SubjectPublicKeyInfo that `openssl pkey <source>` writes. */
async function pinOfSpki(source: string[], at: (name: string) => string): Promise<string> {
  await openssl('pkey', ...source, '-outform', 'DER', '-out', at('spki.der'));
  await openssl('dgst', '-sha256', '-binary', '-out', at('spki.sha256'), at('spki.der'));
  return `sha256/${(await readFile(at('spki.sha256'))).toString('base64')}`;
}
