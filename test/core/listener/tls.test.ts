// TLS keys are checked when the config is validated: a missing or unusable
// file is a problem naming its YAML path, on every listener.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tlsSchema, tlsServerOptions } from '../../../src/core/listener/tls.js';
import { issueCert, testTls } from '../../helpers/tls.js';
import { validationProblems } from '../../helpers/validate.js';


function withTls(http: Record<string, unknown>, admin: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    receivers: { otlp: { protocols: { http: { endpoint: '127.0.0.1:0', ...http } } } },
    exporters: { debug: {} },
    service: { admin: { endpoint: '127.0.0.1:0', ...admin }, pipelines: { traces: { receivers: ['otlp'], exporters: ['debug'] } } },
  };
}

describe('listener tls keys', () => {
  it('accepts a certificate, its key, a client CA and a minimum version', () => {
    const tls = testTls();
    const server = issueCert('validate', 'server');
    expect(validationProblems(withTls({ tls: { cert_file: server.certFile, key_file: server.keyFile, client_ca_file: tls.caFile, min_version: '1.3' } }))).toEqual([]);
  });

  it('reads an unquoted YAML version (a number: 1.3, and 1 for 1.0) as the version written', () => {
    const server = issueCert('validate', 'server');
    const files = { cert_file: server.certFile, key_file: server.keyFile };
    expect(tlsSchema.parse({ ...files, min_version: 1.3 }).minVersion).toBe('TLSv1.3');
    expect(tlsSchema.parse({ ...files, min_version: 1.0 }).minVersion).toBe('TLSv1');
    expect(validationProblems(withTls({ tls: { ...files, min_version: 1.4 } }))).toEqual([expect.stringMatching(/min_version: must be one of 1\.0, 1\.1, 1\.2, 1\.3/)]);
  });

  it('names the YAML path of a missing file, on a receiver and on the admin endpoint', () => {
    const server = issueCert('validate', 'server');
    expect(validationProblems(withTls({ tls: { cert_file: '/nonexistent/tls.crt', key_file: server.keyFile } }, { tls: { cert_file: server.certFile, key_file: '/nonexistent/tls.key' } }))).toEqual([
      'receivers.otlp.protocols.http.tls.cert_file: cannot read /nonexistent/tls.crt: ENOENT',
      'service.admin.tls.key_file: cannot read /nonexistent/tls.key: ENOENT',
    ]);
  });

  it('refuses a key that does not match its certificate, a file that is not PEM and an unknown version', () => {
    const one = issueCert('one', 'server');
    const other = issueCert('other', 'server');
    const garbage = join(one.certFile, '..', 'garbage.pem');
    writeFileSync(garbage, 'not a certificate\n');
    const problems = validationProblems(withTls({ tls: { cert_file: one.certFile, key_file: other.keyFile } }, { tls: { cert_file: garbage, key_file: one.keyFile, min_version: '1.4' } }));
    expect(problems).toEqual([
      expect.stringMatching(/^receivers\.otlp\.protocols\.http\.tls\.key_file: .* are not a usable PEM certificate and matching key/),
      expect.stringMatching(/^service\.admin\.tls\.min_version: must be one of 1\.0, 1\.1, 1\.2, 1\.3/),
    ]);
  });

  it('refuses a client_ca_file that holds no certificate, which OpenSSL would skip and so refuse every client', () => {
    const server = issueCert('validate', 'server');
    const garbage = join(server.certFile, '..', 'not-a-ca.pem');
    writeFileSync(garbage, 'not a cert\n');
    expect(validationProblems(withTls({ tls: { cert_file: server.certFile, key_file: server.keyFile, client_ca_file: garbage } }))).toEqual([
      `receivers.otlp.protocols.http.tls.client_ca_file: ${garbage} holds no PEM CA certificate (or a block that does not parse)`,
    ]);
  });

  it('lowers OpenSSL\'s security level only for a listener that asks for TLS 1.0 or 1.1', () => {
    const server = issueCert('validate', 'server');
    const material = { cert: Buffer.from(''), key: Buffer.from(''), clientCa: undefined };
    expect(tlsServerOptions({ ...material, minVersion: 'TLSv1' }).ciphers).toBe('DEFAULT:@SECLEVEL=0');
    expect(tlsServerOptions({ ...material, minVersion: 'TLSv1.2' }).ciphers).toBeUndefined();
    expect(validationProblems(withTls({ tls: { cert_file: server.certFile, key_file: server.keyFile, min_version: '1.0' } }))).toEqual([]);
  });
});
