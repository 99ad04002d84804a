import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../../src/components.js';
import { parseConfigText } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/shared/errors.js';
import type { DrainsExporterConfig } from '../../../src/exporters/drains/config.js';
import { testTls } from '../../helpers/tls.js';

function config(drains: string, exporter = '{}'): string {
  return `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:4318" } } }
exporters:
  drains: ${exporter}
drains:${drains}
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [drains] }
`;
}

function problemsOf(text: string): readonly string[] {
  try {
    parseConfigText(text, { registry: builtinRegistry(), env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('drains config', () => {
  it('fills every drain and exporter default', () => {
    const parsed = parseConfigText(config('\n  - { name: a, url: "https://x.example/v1/traces" }'), { registry: builtinRegistry(), env: {} });
    const exporter = parsed.exporters.get('drains')?.config as DrainsExporterConfig;
    expect(exporter.drains).toEqual([{ name: 'a', url: 'https://x.example/v1/traces', format: 'protobuf', compression: 'gzip', headers: {}, sampling: [], insecure: false }]);
    expect(exporter).toMatchObject({
      decision_wait: 2000,
      max_pending_spans: 100_000,
      timeout: 10_000,
      sending_queue: { storage: 'disk', max_size: 512 * 1024 * 1024, on_full: 'drop', num_consumers: 2, max_batch_spans: 8192, max_batch_bytes: 8 * 1024 * 1024, flush_timeout: 200 },
      retry_on_failure: { initial_interval: 1000, max_interval: 30_000, max_age: 86_400_000 },
    });
  });

  it('names each bad drain key by its YAML path', () => {
    const problems = problemsOf(
      config(`
  - name: a
    url: https://x.example/v1/traces
    format: xml
    tls: { ca_file: /nonexistent/ca.pem }
  - { name: a, url: "ftp://x", sampling: [{ environment: production, percentage: 10, extra: 1 }] }
  - { name: "", url: "https://x.example" }`),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'drains[0].format: must be one of protobuf, json',
        'drains[0].tls.ca_file: file not found',
        'drains[1].url: must be an https URL',
        'drains[1].sampling[0].extra: unknown key',
        'drains[2].name: must not be empty',
      ]),
    );
  });

  it('names a URL that is not https beside the drain\'s other bad keys', () => {
    const problems = problemsOf(config('\n  - { name: a, url: "http://x.example/v1/traces", format: xml }'));
    expect(problems).toEqual(['drains[0].format: must be one of protobuf, json', 'drains[0].url: must be an https URL']);
  });

  it('names each header a delivery cannot send, as a secret with a trailing newline would give', () => {
    const problems = problemsOf(
      config(`
  - name: a
    url: https://x.example/v1/traces
    headers: { x-team: "key\\n", "x a": v, content-type: text/plain, x-snow: "\u2603", x-fine: ok }`),
    );
    expect(problems).toEqual([
      'drains[0].headers.x-team: has a value a header cannot carry (a line break, a control character or a character beyond Latin-1)',
      'drains[0].headers.x a: is not a valid header name',
      'drains[0].headers.content-type: is set by the exporter or by HTTP itself, not by configuration',
      'drains[0].headers.x-snow: has a value a header cannot carry (a line break, a control character or a character beyond Latin-1)',
    ]);
    const otlphttp = problemsOf(`
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:4318" } } }
exporters:
  otlphttp: { endpoint: "https://x.example/v1/traces", headers: { transfer-encoding: chunked } }
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [otlphttp] }
`);
    expect(otlphttp).toEqual(['exporters.otlphttp.headers.transfer-encoding: is set by the exporter or by HTTP itself, not by configuration']);
  });

  it('refuses a CA file that holds no parsable certificate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-ca-'));
    const bad = join(dir, 'bad.pem');
    writeFileSync(bad, '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n');
    const text = join(dir, 'text.pem');
    writeFileSync(text, 'not a certificate\n');
    try {
      expect(problemsOf(config(`\n  - { name: a, url: "https://x.example", tls: { ca_file: "${bad}" } }\n  - { name: b, url: "https://x.example", tls: { ca_file: "${text}" } }\n  - { name: c, url: "https://x.example", tls: { ca_file: "${testTls().caFile}" } }`))).toEqual([
        'drains[0].tls.ca_file: must be a PEM certificate file',
        'drains[1].tls.ca_file: must be a PEM certificate file',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses two drains of the same name', () => {
    expect(problemsOf(config('\n  - { name: a, url: "https://x.example" }\n  - { name: a, url: "https://y.example" }'))).toEqual(['drains[1].name: duplicate drain name "a"']);
  });

  it('refuses two drains of the same name beside a problem elsewhere in the list', () => {
    const drains = '\n  - { name: a, url: "https://x.example", format: xml }\n  - { name: a, url: "https://y.example" }\n  - { name: b, url: "https://z.example", compression: br }';
    expect(problemsOf(config(drains))).toEqual([
      'drains[0].format: must be one of protobuf, json',
      'drains[2].compression: must be one of gzip, none',
      'drains[1].name: duplicate drain name "a"',
    ]);
  });

  it('refuses a drains list without a drains exporter', () => {
    const text = config('\n  - { name: a, url: "https://x.example" }').replace('  drains: {}\n', '  debug: {}\n').replace('exporters: [drains]', 'exporters: [debug]');
    expect(problemsOf(text)).toContain('drains: no exporter of type drains is configured to use this section');
  });
});

describe('drains queue settings', () => {
  it('takes the shared sending_queue and retry_on_failure keys with units, and refuses a memory queue', () => {
    const text = config(
      '\n  - { name: a, url: "https://x.example/v1/traces", sending_queue: { max_size: 1MiB, on_full: refuse } }',
      '{ sending_queue: { num_consumers: 3, flush_timeout: 50ms }, retry_on_failure: { max_age: 1h } }',
    );
    const parsed = parseConfigText(text, { registry: builtinRegistry(), env: {} });
    const exporter = parsed.exporters.get('drains')?.config as DrainsExporterConfig;
    expect(exporter.sending_queue).toMatchObject({ num_consumers: 3, flush_timeout: 50 });
    expect(exporter.retry_on_failure.max_age).toBe(3_600_000);
    expect(exporter.drains[0]?.sending_queue).toEqual({ max_size: 1024 * 1024, on_full: 'refuse' });
    expect(problemsOf(text.replace('num_consumers: 3,', 'storage: memory,'))).toEqual(['exporters.drains.sending_queue.storage: drains always queue on disk']);
  });
});
