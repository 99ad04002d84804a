import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { substituteEnv } from '../../src/config/env.js';
import { ConfigError } from '../../src/shared/errors.js';
import { fakeRegistry } from '../core/fakes.js';

function substitute(value: unknown, env: Record<string, string>): { value: unknown; problems: string[] } {
  const problems: string[] = [];
  return { value: substituteEnv(value, env, problems), problems };
}

describe('${env:...} substitution', () => {
  it('replaces a set variable anywhere in a string', () => {
    expect(substitute({ headers: { authorization: 'Bearer ${env:TOKEN}' } }, { TOKEN: 't0k' }).value).toEqual({ headers: { authorization: 'Bearer t0k' } });
  });

  it('uses the default when the variable is unset', () => {
    expect(substitute(['${env:PORT:-4318}', '${env:EMPTY:-}'], {}).value).toEqual(['4318', '']);
  });

  it('uses the default when the variable is set but empty, and the empty value when there is none', () => {
    expect(substitute(['${env:KEY:-fallback}', 'x${env:KEY}y'], { KEY: '' }).value).toEqual(['fallback', 'xy']);
  });

  it('prefers a set variable over the default', () => {
    expect(substitute('${env:PORT:-4318}', { PORT: '9999' }).value).toBe('9999');
  });

  it('names the variable and YAML path of an unset variable without default', () => {
    expect(substitute({ exporters: { 'otlphttp/acme': { headers: { authorization: 'Bearer ${env:ACME_TOKEN}' } } } }, {}).problems).toEqual([
      'exporters.otlphttp/acme.headers.authorization: environment variable ACME_TOKEN is not set (use ${env:ACME_TOKEN:-default} to give a default)',
    ]);
  });

  it('refuses a reference it cannot read instead of keeping it as text (a key that would be \${env:GATEWAY-KEY} itself)', () => {
    const { problems } = substitute({ api_keys: ['${env:GATEWAY-KEY}', 'a ${env:OTHER:default} b', '${env:}', '$${env:LITERAL-TEXT}'] }, { OTHER: 'x' });
    expect(problems).toEqual([
      'api_keys[0]: ${env:GATEWAY-KEY} is not a reference Sluice can read: write ${env:NAME} or ${env:NAME:-default}, NAME of letters, digits and _ not starting with a digit ($${ for a literal ${)',
      'api_keys[1]: ${env:OTHER:default} is not a reference Sluice can read: write ${env:NAME} or ${env:NAME:-default}, NAME of letters, digits and _ not starting with a digit ($${ for a literal ${)',
      'api_keys[2]: ${env:} is not a reference Sluice can read: write ${env:NAME} or ${env:NAME:-default}, NAME of letters, digits and _ not starting with a digit ($${ for a literal ${)',
    ]);
  });

  it('keeps a __proto__ key a key, which the schema then refuses, instead of making it the prototype', () => {
    const { value } = substitute(JSON.parse('{"service": {"__proto__": {"shutdown_grace": "1m"}}}'), {});
    const service = (value as { service: Record<string, unknown> }).service;
    expect(Object.keys(service)).toEqual(['__proto__']);
    expect(service['shutdown_grace']).toBeUndefined();
  });

  it('keeps $${ as a literal ${', () => {
    expect(substitute('$${env:HOME}', { HOME: '/root' }).value).toBe('${env:HOME}');
  });

  it('writes $${ as a literal ${ whatever follows it, a reference Sluice could not read or no reference at all', () => {
    const { value, problems } = substitute(['$${env:MY-KEY}', 'pa$${x}ss', '$${', 'a$$b'], {});
    expect(problems).toEqual([]);
    expect(value).toEqual(['${env:MY-KEY}', 'pa${x}ss', '${', 'a$$b']);
  });

  it('reports unset variables together with schema problems', () => {
    const text = `
receivers: { fakein: {} }
exporters: { fakeout: { encoding: "\${env:ENCODING}" } }
service: { pipelines: { traces: { receivers: [fakein], exporters: [fakeout] } } }
`;
    let problems: readonly string[] = [];
    try {
      parseConfigText(text, { registry: fakeRegistry(), env: {} });
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems).toEqual([
      'exporters.fakeout.encoding: environment variable ENCODING is not set (use ${env:ENCODING:-default} to give a default)',
      'exporters.fakeout.encoding: must be one of json, protobuf',
    ]);
  });
});

describe('${env:...} as a whole value', () => {
  const text = `
receivers:
  otlp:
    protocols:
      http: { endpoint: "127.0.0.1:0", max_connections: "\${env:MAX_CONNECTIONS}" }
    auth: { api_keys: ["\${env:OTLP_KEY}"] }
exporters:
  file: { path: /tmp/sluice-env-typed.jsonl, fsync: "\${env:FSYNC:-true}" }
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [file] }
`;

  it('gives a key that wants a number or a boolean the typed value, and a key that wants a string the string, as the collector does', async () => {
    const { builtinRegistry } = await import('../../src/components.js');
    const config = parseConfigText(text, { registry: builtinRegistry(), env: { MAX_CONNECTIONS: '250', OTLP_KEY: '12345', FSYNC: 'false' } });
    const otlp = config.receivers.get('otlp')?.config as { protocols: { http: { max_connections: number } }; auth: { api_keys: string[] } };
    expect(otlp.protocols.http.max_connections).toBe(250);
    expect(otlp.auth.api_keys).toEqual(['12345']);
    expect((config.exporters.get('file')?.config as { fsync: boolean }).fsync).toBe(false);
  });

  it('still names the key when the variable holds no number where one is wanted', async () => {
    const { builtinRegistry } = await import('../../src/components.js');
    expect(() => parseConfigText(text, { registry: builtinRegistry(), env: { MAX_CONNECTIONS: 'many', OTLP_KEY: 'k' } })).toThrow(/receivers\.otlp\.protocols\.http\.max_connections: /);
  });

  it('names the string\'s own problem when a value that reads as a number is no valid string for its key either', async () => {
    const { builtinRegistry } = await import('../../src/components.js');
    const gateway = (input: string) => `
receivers:
  gateway:
    endpoint: "127.0.0.1:0"
    api_keys: ["k"]
    providers: { fake: { type: openai, base_url: "http://127.0.0.1:9/v1" } }
    models:
      - { id: fake/m1, pricing: { input: ${input}, output: "0.000002" }, endpoints: [{ provider: fake, model: m1 }] }
exporters:
  debug: {}
service:
  pipelines:
    traces: { receivers: [gateway], exporters: [debug] }
`;
    const problems = (input: string, env: Record<string, string> = {}): readonly string[] => {
      try {
        parseConfigText(gateway(input), { registry: builtinRegistry(), env });
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
      return [];
    };
    for (const value of ['1e-6', '-1']) {
      const written = problems(`"${value}"`);
      expect(written).toEqual([expect.stringMatching(/^receivers\.gateway\.models\[0\]\.pricing\.input: must be a decimal string like "0\.000003"/)]);
      expect(problems('"${env:PIN}"', { PIN: value })).toEqual(written);
    }
  });

  it('reads a signed number from a variable as the collector does (+5 is 5), and names the number\'s own problem when the key refuses it', async () => {
    const { builtinRegistry } = await import('../../src/components.js');
    const config = parseConfigText(text, { registry: builtinRegistry(), env: { MAX_CONNECTIONS: '+5', OTLP_KEY: 'k' } });
    expect((config.receivers.get('otlp')?.config as { protocols: { http: { max_connections: number } } }).protocols.http.max_connections).toBe(5);
    expect(problemsOf(() => parseConfigText(text, { registry: builtinRegistry(), env: { MAX_CONNECTIONS: '-5', OTLP_KEY: 'k' } }))).toEqual([
      'receivers.otlp.protocols.http.max_connections: must be > 0',
    ]);
  });

  it('refuses a quoted number where a number is wanted, as the collector does, saying it is a string and how to write it', async () => {
    const { builtinRegistry } = await import('../../src/components.js');
    const quoted = (value: string) => text.replace('"\${env:MAX_CONNECTIONS}"', JSON.stringify(value));
    for (const value of ['+5', '5', ' 5 ']) {
      expect(problemsOf(() => parseConfigText(quoted(value), { registry: builtinRegistry(), env: { OTLP_KEY: 'k' } }))).toEqual([
        `receivers.otlp.protocols.http.max_connections: must be a number, not the string ${JSON.stringify(value)} (a quoted value is a string: write the number without quotes)`,
      ]);
    }
    // Text that is no number either way keeps the plain problem.
    expect(problemsOf(() => parseConfigText(quoted('many'), { registry: builtinRegistry(), env: { OTLP_KEY: 'k' } }))).toEqual(['receivers.otlp.protocols.http.max_connections: must be a number']);
  });

  it('keeps text around a reference, and an escaped reference, as strings', () => {
    expect(substitute({ a: 'x${env:N}', b: '$${env:N}' }, { N: '5' }).value).toEqual({ a: 'x5', b: '${env:N}' });
  });
});

function problemsOf(load: () => unknown): readonly string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}
