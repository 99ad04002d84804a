// A throwaway certificate authority and certificates it signs (servers for
// 127.0.0.1 and localhost, and clients for mTLS), made with openssl at test
// time (nothing secret is committed).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';

export interface TestTls {
  caFile: string;
  ca: string;
  cert: string;
  key: string;
}

export interface IssuedCert {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

let cached: (TestTls & { dir: string }) | undefined;
let issued = 0;

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

export function testTls(): TestTls {
  if (cached !== undefined) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Sluice Test CA');
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
  cached = {
    dir,
    caFile: join(dir, 'ca.pem'),
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
  };
  return cached;
}

/** A new certificate signed by the test CA: a server one (for 127.0.0.1 and localhost) or a client one. */
export function issueCert(commonName: string, usage: 'server' | 'client'): IssuedCert {
  testTls();
  const dir = (cached as { dir: string }).dir;
  const name = `issued-${++issued}`;
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${commonName}`);
  writeFileSync(join(dir, `${name}.cnf`), usage === 'server' ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' : 'extendedKeyUsage=clientAuth\n');
  openssl(dir, 'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.cnf`);
  return issuedFiles(dir, name);
}

/** A self-signed certificate that the test CA never signed: a stranger to every mTLS listener. */
export function strangerCert(commonName: string): IssuedCert {
  testTls();
  const dir = (cached as { dir: string }).dir;
  const name = `stranger-${++issued}`;
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${commonName}`);
  return issuedFiles(dir, name);
}

function issuedFiles(dir: string, name: string): IssuedCert {
  return {
    certFile: join(dir, `${name}.pem`),
    keyFile: join(dir, `${name}.key`),
    cert: readFileSync(join(dir, `${name}.pem`), 'utf8'),
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
  };
}

/** The common name of the certificate a fresh TLS connection to 127.0.0.1:port is served (with a client certificate for mTLS). */
export function servedName(port: number, ca: string, client?: { cert: string; key: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...(client === undefined ? {} : { cert: client.cert, key: client.key }) }, () => {
      const subject = socket.getPeerCertificate().subject;
      socket.destroy();
      resolve(String(subject?.CN ?? ''));
    });
    socket.once('error', reject);
  });
}
