import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinRegistry } from '../../src/components.js';
import { parseConfigText } from '../../src/config/load.js';
import { ConfigError } from '../../src/shared/errors.js';
import { fakeExporterFactory, createRecorder, fakeRegistry } from '../core/fakes.js';

const GOOD = `
receivers:
  fakein: {}
processors:
  fakeproc/a: { tag: a }
exporters:
  fakeout/acme: { encoding: json }
service:
  pipelines:
    traces:
      receivers: [fakein]
      processors: [fakeproc/a]
      exporters: [fakeout/acme]
`;

function problemsOf(text: string, env: Record<string, string> = {}, registry = fakeRegistry()): readonly string[] {
  try {
    parseConfigText(text, { registry, env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('config validation', () => {
  it('accepts a good config and merges each section over its defaults', () => {
    const config = parseConfigText(GOOD, { registry: fakeRegistry(), env: {} });
    expect(config.exporters.get('fakeout/acme')?.config).toEqual({ encoding: 'json', reject: 'none', delay_ms: 0, start_delay_ms: 0 });
    expect(config.receivers.get('fakein')?.config).toEqual({ fail_start: false, hang_start: false });
  });

  it('fills the service defaults', () => {
    const config = parseConfigText(GOOD, { registry: fakeRegistry(), env: {} });
    expect(config.service.storage.directory).toBe('./data');
    expect(config.service.admin).toEqual({ endpoint: '127.0.0.1:13133', max_connections: 10_000, read_header_timeout: 10_000, read_timeout: 60_000, idle_timeout: 60_000 });
    expect(config.service.shutdown_grace).toBe(5_000);
    expect(config.service.telemetry.logs.level).toBe('info');
  });

  it('takes an admin endpoint without a host (every interface) and refuses one with stray whitespace', () => {
    const admin = (endpoint: string) => GOOD.replace('pipelines:', `admin: { endpoint: "${endpoint}" }\n  pipelines:`);
    expect(parseConfigText(admin(':13133'), { registry: fakeRegistry(), env: {} }).service.admin.endpoint).toBe(':13133');
    expect(problemsOf(admin(' 127.0.0.1:13133'))).toEqual(['service.admin.endpoint: must be host:port with a port from 0 to 65535 (e.g. 127.0.0.1:13133)']);
  });

  it('refuses a shutdown_grace or admin timeout longer than a Node timer can hold, naming the key', () => {
    const text = GOOD.replace('service:\n', 'service:\n  shutdown_grace: 30d\n  admin: { idle_timeout: 22d }\n');
    expect(problemsOf(text)).toEqual(['service.admin.idle_timeout: must be at most 21d', 'service.shutdown_grace: must be at most 21d']);
  });

  it('reads durations as the collector does (Go time.ParseDuration): a leading +, fractions and compounds', () => {
    const admin = (timeouts: string) => GOOD.replace('pipelines:', `admin: { ${timeouts} }\n  pipelines:`);
    const text = admin('read_header_timeout: "+5s", read_timeout: "+1m30s", idle_timeout: "1h2m"');
    expect(parseConfigText(text, { registry: fakeRegistry(), env: {} }).service.admin).toMatchObject({ read_header_timeout: 5_000, read_timeout: 90_000, idle_timeout: 3_720_000 });
    const fractions = admin('read_header_timeout: ".5s", read_timeout: "1.5s", idle_timeout: "2.m"');
    expect(parseConfigText(fractions, { registry: fakeRegistry(), env: {} }).service.admin).toMatchObject({ read_header_timeout: 500, read_timeout: 1_500, idle_timeout: 120_000 });
  });

  it('refuses a duration in a unit Sluice does not take, or with no digits, as a duration', () => {
    const hint = 'must be a duration like 200ms, 5s, 1m or a number of milliseconds';
    const text = GOOD.replace('service:\n', 'service:\n  shutdown_grace: 500us\n  admin: { read_timeout: "5µs", idle_timeout: ".s", read_header_timeout: "+-5s" }\n');
    expect(problemsOf(text)).toEqual([`service.admin.read_header_timeout: ${hint}`, `service.admin.read_timeout: ${hint}`, `service.admin.idle_timeout: ${hint}`, `service.shutdown_grace: ${hint}`]);
  });

  it('refuses a negative duration with the rule it breaks, naming the key', () => {
    const text = GOOD.replace('service:\n', 'service:\n  shutdown_grace: "-5s"\n  admin: { idle_timeout: -5 }\n');
    expect(problemsOf(text)).toEqual(['service.admin.idle_timeout: must not be negative', 'service.shutdown_grace: must not be negative']);
    const gateway = `
receivers:
  gateway: { endpoint: 127.0.0.1:0, environment: dev, api_keys: [k], first_byte_timeout: "-5s", stream_idle_timeout: "-1m30s" }
exporters:
  otlphttp/a: { endpoint: "http://127.0.0.1:1/v1/traces", timeout: -5s }
service:
  pipelines:
    traces: { receivers: [gateway], exporters: [otlphttp/a] }
`;
    expect(problemsOf(gateway, {}, builtinRegistry())).toEqual([
      'receivers.gateway.first_byte_timeout: must be greater than 0',
      'receivers.gateway.stream_idle_timeout: must be greater than 0',
      'exporters.otlphttp/a.timeout: must be greater than 0',
    ]);
  });

  it('reads a log level in any case, as a LOG_LEVEL variable often holds it', () => {
    const config = parseConfigText(GOOD.replace('service:\n', 'service:\n  telemetry: { logs: { level: "${env:LOG_LEVEL}" } }\n'), { registry: fakeRegistry(), env: { LOG_LEVEL: 'WARN' } });
    expect(config.service.telemetry.logs.level).toBe('warn');
    expect(problemsOf(GOOD.replace('service:\n', 'service:\n  telemetry: { logs: { level: loud } }\n'))).toEqual(['service.telemetry.logs.level: must be one of fatal, error, warn, info, debug, trace, silent']);
  });

  it('names the YAML path of a bad enum value', () => {
    expect(problemsOf(GOOD.replace('encoding: json', 'encoding: xml'))).toEqual(['exporters.fakeout/acme.encoding: must be one of json, protobuf']);
  });

  it('reports unknown keys in a component config', () => {
    expect(problemsOf(GOOD.replace('{ tag: a }', '{ tag: a, colour: red }'))).toEqual(['processors.fakeproc/a.colour: unknown key']);
  });

  it('reports unknown top-level and service keys', () => {
    const text = `${GOOD}\nextra: 1\n`.replace('service:\n', 'service:\n  colour: red\n');
    expect(problemsOf(text)).toEqual(['extra: unknown key', 'service.colour: unknown key']);
  });

  it('reports a pipeline reference to an unconfigured component', () => {
    expect(problemsOf(GOOD.replace('exporters: [fakeout/acme]', 'exporters: [fakeout/acme, fakeout/nope]'))).toEqual([
      'service.pipelines.traces.exporters[1]: references exporter "fakeout/nope" which is not configured under exporters',
    ]);
  });

  it('accepts a component configured but used in no pipeline, as the collector does, and leaves it out of what is built', () => {
    const text = GOOD.replace('exporters:\n  fakeout/acme', 'exporters:\n  fakeout/spare: {}\n  fakeout/acme');
    expect(problemsOf(text)).toEqual([]);
    const config = parseConfigText(text, { registry: fakeRegistry(), env: {} });
    expect(config.unused).toEqual(['exporters.fakeout/spare']);
    expect([...config.exporters.keys()]).toEqual(['fakeout/acme']);
  });

  it('still checks the shape of a component used in no pipeline', () => {
    expect(problemsOf(GOOD.replace('exporters:\n  fakeout/acme', 'exporters:\n  fakeout/spare: { encoding: xml }\n  fakeout/acme'))).toEqual([
      expect.stringMatching(/^exporters\.fakeout\/spare\.encoding: /),
    ]);
  });

  it('reports a pipeline without receivers or exporters', () => {
    const text = GOOD.replace('receivers: [fakein]', 'receivers: []').replace('exporters: [fakeout/acme]', 'exporters: []');
    expect(problemsOf(text)).toEqual([
      'service.pipelines.traces.receivers: must list at least one receiver',
      'service.pipelines.traces.exporters: must list at least one exporter',
    ]);
  });

  it('reports a component type that has no factory', () => {
    expect(problemsOf(GOOD.replace('fakeout/acme: { encoding: json }', 'fakeout/acme: { encoding: json }\n  kafka: {}').replace('[fakeout/acme]', '[fakeout/acme, kafka]'))).toEqual([
      'exporters.kafka: unknown exporter type "kafka" (known: fakeout)',
    ]);
  });

  it('reports a malformed component id', () => {
    expect(problemsOf(GOOD.replaceAll('fakeout/acme', 'Fake Out'))[0]).toMatch(/^exporters\.Fake Out: component ids are `type` or `type\/name`/);
  });

  it('reports a missing pipelines section and a pipeline of another signal', () => {
    expect(problemsOf('receivers: {}\nservice: {}\n')).toEqual(['service.pipelines: required']);
    expect(problemsOf(GOOD.replace('    traces:', '    metrics:'))[0]).toMatch(/^service\.pipelines\.metrics: pipeline ids are `traces`/);
  });

  it('reports every problem at once, each with its YAML path', () => {
    const text = GOOD.replace('encoding: json', 'encoding: xml, delay_ms: soon')
      .replace('{ tag: a }', '{ tag: 7 }')
      .replace('pipelines:', 'telemetry: { logs: { level: loud } }\n  admin: { endpoint: "127.0.0.1:70000" }\n  pipelines:');
    expect(problemsOf(text)).toEqual([
      'processors.fakeproc/a.tag: must be a string',
      'exporters.fakeout/acme.encoding: must be one of json, protobuf',
      'exporters.fakeout/acme.delay_ms: must be a number',
      'service.admin.endpoint: must be host:port with a port from 0 to 65535 (e.g. 127.0.0.1:13133)',
      'service.telemetry.logs.level: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('refuses a key or credential with whitespace at either end, which no request could present, naming each', async () => {
    const { builtinRegistry } = await import('../../src/components.js');
    const text = `
receivers:
  otlp:
    protocols: { http: { endpoint: "127.0.0.1:0" } }
    auth: { api_keys: ["\${env:OTLP_KEY}"] }
  gateway:
    endpoint: "127.0.0.1:0"
    api_keys: ["trailing ", " leading", { key: "\${env:TEAM_KEY}", name: team }, "inner space is fine"]
    providers:
      openai: { type: openai, base_url: "https://api.openai.com/v1", api_key: "\${env:OPENAI_KEY}" }
      aws: { type: bedrock, region: us-east-1, access_key_id: "AKIA ", secret_access_key: "\${env:AWS_SECRET}" }
exporters:
  debug: {}
service:
  admin: { api_key: " adm " }
  pipelines:
    traces: { receivers: [otlp, gateway], exporters: [debug] }
`;
    // What an environment variable read from a secret file with its final line break holds.
    const env = { OTLP_KEY: 'otlp-key\n', TEAM_KEY: 'team-key\r\n', OTLP: '', OPENAI_KEY: 'sk-abc\n', AWS_SECRET: '\tsecret' };
    const problem = 'must not begin or end with whitespace (a line break at the end of a secret file, say): remove it';
    expect(problemsOf(text, env, builtinRegistry())).toEqual([
      `receivers.otlp.auth.api_keys[0]: ${problem}`,
      `receivers.gateway.api_keys[0]: ${problem}`,
      `receivers.gateway.api_keys[1]: ${problem}`,
      `receivers.gateway.api_keys[2].key: ${problem}`,
      `receivers.gateway.providers.openai.api_key: ${problem}`,
      `receivers.gateway.providers.aws.access_key_id: ${problem}`,
      `receivers.gateway.providers.aws.secret_access_key: ${problem}`,
      `service.admin.api_key: ${problem}`,
    ]);
  });

  it('refuses a key with a character no HTTP header can carry, which no request could present, naming each', async () => {
    const { builtinRegistry } = await import('../../src/components.js');
    const text = `
receivers:
  otlp:
    protocols: { http: { endpoint: "127.0.0.1:0" } }
    auth: { api_keys: ["otlp\\u0007key"] }
  gateway:
    endpoint: "127.0.0.1:0"
    api_keys: ["ключ-1", { key: "team\\u2603", name: team }, "clé latin-1 is fine"]
    providers:
      openai: { type: openai, base_url: "https://api.openai.com/v1", api_key: "sk-\\u4e2d" }
exporters:
  debug: {}
service:
  admin: { api_key: "adm\\u0000" }
  pipelines:
    traces: { receivers: [otlp, gateway], exporters: [debug] }
`;
    const problem = 'must hold only characters an HTTP header can carry (no control characters, nothing beyond Latin-1): no request could carry it';
    expect(problemsOf(text, {}, builtinRegistry())).toEqual([
      `receivers.otlp.auth.api_keys[0]: ${problem}`,
      `receivers.gateway.api_keys[0]: ${problem}`,
      `receivers.gateway.api_keys[1].key: ${problem}`,
      `receivers.gateway.providers.openai.api_key: ${problem}`,
      `service.admin.api_key: ${problem}`,
    ]);
  });

  it('reports YAML syntax errors with their line', () => {
    expect(problemsOf('receivers: [\n')[0]).toMatch(/^config:\d+:\d+: /);
  });

  it('reads YAML merge keys (<<), as the collector does, so an anchored block can be reused with overrides', () => {
    const text = `
receivers:
  fakein: {}
exporters:
  fakeout/a: &defaults { encoding: json, delay_ms: 5 }
  fakeout/b:
    <<: *defaults
    encoding: protobuf
service:
  pipelines:
    traces: { receivers: [fakein], exporters: [fakeout/a, fakeout/b] }
`;
    const config = parseConfigText(text, { registry: fakeRegistry(), env: {} });
    expect(config.exporters.get('fakeout/a')?.config).toEqual({ encoding: 'json', reject: 'none', delay_ms: 5, start_delay_ms: 0 });
    expect(config.exporters.get('fakeout/b')?.config).toEqual({ encoding: 'protobuf', reject: 'none', delay_ms: 5, start_delay_ms: 0 });
  });

  it('refuses 0 for a timeout or limit at which every request or delivery would fail at once, naming each key', () => {
    const text = `
receivers:
  gateway:
    endpoint: 127.0.0.1:0
    environment: dev
    api_keys: [k]
    max_request_body_size: 0
    first_byte_timeout: 0
    stream_idle_timeout: 0ms
    providers:
      o: { type: openai, base_url: "http://127.0.0.1:1/v1", stream_idle_timeout: 0s }
      g: { type: google, api_key: x, image_fetch: { max_size: 0, timeout: 0 } }
exporters:
  otlphttp/a: { endpoint: "http://127.0.0.1:1/v1/traces", timeout: 0 }
  drains: { timeout: 0 }
drains:
  - { name: d, url: "https://127.0.0.1:1/v1/traces", sending_queue: { max_size: 0 } }
service:
  pipelines:
    traces: { receivers: [gateway], exporters: [otlphttp/a, drains] }
`;
    expect(problemsOf(text, {}, builtinRegistry())).toEqual([
      'drains[0].sending_queue.max_size: must be greater than 0',
      'receivers.gateway.max_request_body_size: must be greater than 0',
      'receivers.gateway.first_byte_timeout: must be greater than 0',
      'receivers.gateway.stream_idle_timeout: must be greater than 0',
      'receivers.gateway.providers.o.stream_idle_timeout: must be greater than 0',
      'receivers.gateway.providers.g.image_fetch.max_size: must be greater than 0',
      'receivers.gateway.providers.g.image_fetch.timeout: must be greater than 0',
      'exporters.otlphttp/a.timeout: must be greater than 0',
      'exporters.drains.timeout: must be greater than 0',
    ]);
  });

  it('refuses an admin key that is also a gateway or OTLP client key, naming the key it repeats', () => {
    const text = `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:0" } }, auth: { api_keys: [otlp-key] } }
  gateway:
    endpoint: 127.0.0.1:0
    api_keys: [gateway-key, { key: team-key, name: team }]
    providers: { o: { type: openai, base_url: "http://127.0.0.1:1/v1" } }
exporters:
  debug: {}
service:
  admin: { api_key: ADMIN }
  pipelines:
    traces: { receivers: [otlp, gateway], exporters: [debug] }
`;
    const repeats = (admin: string) => problemsOf(text.replace('ADMIN', admin), {}, builtinRegistry());
    expect(repeats('admin-key')).toEqual([]);
    const problem = (path: string) => `service.admin.api_key: is also the client key ${path}: give the admin endpoint a key of its own (a client holding it could change where every trace goes)`;
    expect(repeats('team-key')).toEqual([problem('receivers.gateway.api_keys[1]')]);
    expect(repeats('otlp-key')).toEqual([problem('receivers.otlp.auth.api_keys[0]')]);
  });

  it('reports shared listener addresses and a shared admin key beside a shape problem elsewhere in service', () => {
    const text = `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:24500" }, grpc: { endpoint: "127.0.0.1:24500" } }, auth: { api_keys: [same-key] } }
exporters:
  debug: {}
service:
  usage: { retention: 12h }
  admin: { endpoint: "127.0.0.1:24500", api_key: same-key }
  pipelines:
    traces: { receivers: [otlp], exporters: [debug] }
`;
    expect(problemsOf(text, {}, builtinRegistry())).toEqual([
      'service.usage.retention: must be at least 1d',
      'receivers.otlp.protocols.grpc.endpoint: 127.0.0.1:24500 takes the port of receivers.otlp.protocols.http.endpoint (127.0.0.1:24500); two listeners cannot share an address',
      'service.admin.endpoint: 127.0.0.1:24500 takes the port of receivers.otlp.protocols.http.endpoint (127.0.0.1:24500); two listeners cannot share an address',
      'service.admin.api_key: is also the client key receivers.otlp.auth.api_keys[0]: give the admin endpoint a key of its own (a client holding it could change where every trace goes)',
    ]);
    // A malformed admin section is its own problem; the receivers are still checked against each other.
    expect(problemsOf(text.replace('api_key: same-key', 'api_key: same-key, bogus: 1'), {}, builtinRegistry())).toEqual([
      'service.admin.bogus: unknown key',
      'service.usage.retention: must be at least 1d',
      'receivers.otlp.protocols.grpc.endpoint: 127.0.0.1:24500 takes the port of receivers.otlp.protocols.http.endpoint (127.0.0.1:24500); two listeners cannot share an address',
    ]);
  });

  it('reports a queue or retry relation, as the listener timeouts, beside a bad key in the same block', () => {
    const text = `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:0", read_header_timeout: 20s, read_timeout: 10s, bogus: 1 } } }
exporters:
  otlphttp/a:
    endpoint: https://x.example.com/v1/traces
    sending_queue: { max_size: 1MiB, max_batch_bytes: 2MiB, on_full: never }
    retry_on_failure: { initial_interval: 10s, max_interval: 1s, enabled: maybe }
  drains: { sending_queue: { storage: memory }, timeout: 0 }
service:
  admin: { endpoint: "127.0.0.1:0", read_header_timeout: 20s, read_timeout: 10s, bogus: 1 }
  pipelines:
    traces: { receivers: [otlp], exporters: [otlphttp/a, drains] }
`;
    expect([...problemsOf(text, {}, builtinRegistry())].sort()).toEqual([
      'exporters.drains.sending_queue.storage: drains always queue on disk',
      'exporters.drains.timeout: must be greater than 0',
      'exporters.otlphttp/a.retry_on_failure.enabled: must be a boolean',
      'exporters.otlphttp/a.retry_on_failure.max_interval: max_interval must be >= initial_interval',
      'exporters.otlphttp/a.sending_queue.max_batch_bytes: max_batch_bytes must be <= max_size',
      'exporters.otlphttp/a.sending_queue.on_full: must be one of drop, refuse',
      'receivers.otlp.protocols.http.bogus: unknown key',
      'receivers.otlp.protocols.http.read_header_timeout: must not be longer than read_timeout',
      'service.admin.bogus: unknown key',
      'service.admin.read_header_timeout: must not be longer than read_timeout',
    ]);
  });

  it('says "must not be empty" of an empty string where one is required', () => {
    const text = GOOD.replace('service:\n', 'service:\n  storage: { directory: "" }\n');
    expect(problemsOf(text)).toEqual(['service.storage.directory: must not be empty']);
  });

  it('names a repeated key and the line it was first set on', () => {
    const twice = GOOD.replace('  fakeout/acme: { encoding: json }\n', '  fakeout/acme: { encoding: json }\n  fakeout/acme: { encoding: protobuf }\n');
    expect(problemsOf(twice)).toEqual(['config:8:3: key "fakeout/acme" is already set on line 7 of this mapping: YAML keys must be unique']);
    const inFlow = GOOD.replace('{ encoding: json }', '{ encoding: json, encoding: protobuf }');
    expect(problemsOf(inFlow)).toEqual(['config:7:35: key "encoding" is already set on line 7 of this mapping: YAML keys must be unique']);
  });

  it('says in its own words that a file holds a second YAML document, and where', () => {
    expect(problemsOf(`${GOOD}---\nreceivers: {}\n`)).toEqual(['config:14:1: a config file holds one YAML document: this `---` starts a second']);
  });

  it('names the line of an alias whose anchor is not set above it', () => {
    const text = GOOD.replace('fakeout/acme: { encoding: json }', 'fakeout/acme: *acme\n  fakeout/other: &acme { encoding: json }');
    expect(problemsOf(text)).toEqual(['config:7:17: *acme names no anchor set above it (&acme)']);
  });

  it('names the line of an alias inside the node its anchor is set on, which would make the config a cycle', () => {
    const text = GOOD.replace('fakeout/acme: { encoding: json }', 'fakeout/acme: &acme { encoding: json, again: [*acme] }');
    expect(problemsOf(text)).toEqual(['config:7:49: *acme is inside the node it names (&acme): a config cannot refer to itself']);
  });

  it('names the file of aliases that would expand too far', () => {
    const laughs = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 7; i++) laughs.push(`a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(', ')}]`);
    expect(problemsOf(laughs.join('\n'))).toEqual(['config: Excessive alias count indicates a resource exhaustion attack']);
  });

  it('says "must be an object" of a mapping that is something else, whatever the schema calls it', () => {
    expect(problemsOf(GOOD.replace(/ {2}pipelines:[^]*$/, '  pipelines: [traces]\n'))).toEqual(['service.pipelines: must be an object']);
  });

  it('says to quote a reference written bare inside { } or [ ], where YAML reads its { as syntax, instead of every error that follows', () => {
    expect(problemsOf(GOOD.replace('encoding: json', 'encoding: ${env:ENCODING}'), { ENCODING: 'json' })).toEqual([
      'config:7:30: Unexpected flow-map-start at node end (inside { } or [ ], quote a reference: "${env:NAME}")',
    ]);
    expect(problemsOf(GOOD.replace('[fakein]', '[${env:RECEIVER}]'))).toEqual(['config:11:20: Missing , or : between flow sequence items (inside { } or [ ], quote a reference: "${env:NAME}")']);
  });

  it('reports an empty file', () => {
    expect(problemsOf('')).toEqual(['(root): the config is empty']);
  });

  it('validates a registered top-level section and hands it to its component', () => {
    const recorder = createRecorder();
    const registry = fakeRegistry(recorder)
      .register({ ...fakeExporterFactory(recorder, 'lists'), configSchema: z.strictObject({ items: z.custom<{ url: string }[]>() }), createDefaultConfig: () => ({}) })
      .registerTopLevelSection({
        key: 'items',
        schema: z.array(z.strictObject({ url: z.url() })).default([]),
        inject: { kind: 'exporter', type: 'lists', configKey: 'items' },
      });
    const text = `${GOOD.replace('[fakeout/acme]', '[fakeout/acme, lists]').replace('exporters:\n', 'exporters:\n  lists: {}\n')}items:\n  - url: https://a.example\n`;
    const config = parseConfigText(text, { registry, env: {} });
    expect(config.exporters.get('lists')?.config).toEqual({ items: [{ url: 'https://a.example' }] });
    expect(problemsOf(text.replace('https://a.example', 'not a url'), {}, registry)).toEqual(['items[0].url: must be a URL']);
  });
});
