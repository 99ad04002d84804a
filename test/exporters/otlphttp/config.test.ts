import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../../src/components.js';
import { parseConfigText } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/shared/errors.js';
import { testTls } from '../../helpers/tls.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function problemsWithCa(caFile: string): readonly string[] {
  const text = `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:4318" } } }
exporters:
  otlphttp/acme: { endpoint: "https://collector.example.com/v1/traces", tls: { ca_file: "${caFile}" } }
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [otlphttp/acme] }
`;
  try {
    parseConfigText(text, { registry: builtinRegistry(), env: {} });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('otlphttp config', () => {
  it('checks tls.ca_file when the config is validated, not when the exporter starts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-ca-'));
    dirs.push(dir);
    const bad = join(dir, 'bad.pem');
    writeFileSync(bad, '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n');
    expect(problemsWithCa(join(dir, 'missing.pem'))).toEqual(['exporters.otlphttp/acme.tls.ca_file: file not found']);
    expect(problemsWithCa(bad)).toEqual(['exporters.otlphttp/acme.tls.ca_file: must be a PEM certificate file']);
    expect(problemsWithCa(testTls().caFile)).toEqual([]);
  });
});
