import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throw-away self-signed certificate for 127.0.0.1/localhost, made with the openssl CLI (node:crypto can
 * make keys but not X.509 certificates). Tests that serve HTTPS need openssl on the machine.
 */
export function selfSignedCertificate(): { certFile: string; keyFile: string; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'crm-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ], { stdio: 'ignore' });
  return { certFile, keyFile, cert: readFileSync(certFile) };
}
