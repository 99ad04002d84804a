// A throwaway CA and a server certificate for 127.0.0.1/localhost, made with openssl at test time.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  readonly caPem: string;
  readonly caFile: string;
  readonly key: string;
  readonly cert: string;
  readonly directory: string;
  cleanup(): void;
}

export function makeTestPki(): TestPki {
  const directory = mkdtempSync(join(tmpdir(), 'sluice-tls-'));
  const at = (name: string) => join(directory, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: directory, stdio: 'pipe' });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=sluice test CA']);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=localhost']);
  writeFileSync(at('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n');
  openssl(['x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at('server.pem'), '-days', '2', '-extfile', at('ext.cnf')]);
  return {
    caPem: readFileSync(at('ca.pem'), 'utf8'),
    caFile: at('ca.pem'),
    key: readFileSync(at('server.key'), 'utf8'),
    cert: readFileSync(at('server.pem'), 'utf8'),
    directory,
    cleanup: () => rmSync(directory, { recursive: true, force: true }),
  };
}
