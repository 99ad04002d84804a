import { describe, expect, it } from 'vitest';
import { validationProblems } from '../../helpers/validate.js';
import { apiKeyName, createDefaultConfig, gatewayConfigSchema } from '../../../src/receivers/gateway/config.js';

function parse(overrides: Record<string, unknown>) {
  return gatewayConfigSchema.safeParse({ ...createDefaultConfig(), api_keys: ['k'], ...overrides });
}


function problems(overrides: Record<string, unknown>): string[] {
  const result = parse(overrides);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('gateway config', () => {
  it('applies the DESIGN defaults, with durations in ms and sizes in bytes', () => {
    const result = parse({});
    expect(result.success && result.data).toMatchObject({
      endpoint: '127.0.0.1:8787',
      max_request_body_size: 20 * 1024 * 1024,
      first_byte_timeout: 30_000,
      stream_idle_timeout: 60_000,
      capture_content: false,
      providers: {},
      models: [],
    });
  });

  it('refuses timeouts longer than a Node timer can hold, naming the key', () => {
    expect(problems({ first_byte_timeout: '30d', stream_idle_timeout: '21d' })).toEqual(['first_byte_timeout: must be at most 21d']);
  });

  it('accepts api_keys as strings or objects with requests_per_minute', () => {
    const result = parse({ api_keys: ['a', { key: 'b', requests_per_minute: 60 }] });
    expect(result.success && result.data.api_keys).toEqual(['a', { key: 'b', requests_per_minute: 60 }]);
  });

  it('accepts keys as records with a name, limits and a budget', () => {
    const record = { key: 'sk-1', name: 'team-a', requests_per_minute: 60, tokens_per_minute: 10_000, budget: { usd: 50, period: 'month' } };
    const result = parse({ api_keys: [record, 'sk-2'] });
    expect(result.success && result.data.api_keys).toEqual([record, 'sk-2']);
  });

  it('names a bare key by a hash prefix, never by the key itself', () => {
    const result = parse({ api_keys: ['sk-secret-value'] });
    const name = result.success ? apiKeyName(result.data.api_keys[0] as string) : '';
    expect(name).toMatch(/^key-[0-9a-f]{8}$/);
    expect(name).not.toContain('secret');
  });

  it('refuses unknown keys in a key record, bad budgets and duplicate names', () => {
    expect(problems({ api_keys: [{ key: 'a', rpm: 5 }] })).toEqual(['api_keys.0.rpm: unknown key']);
    expect(problems({ api_keys: [{ key: 'a', budget: { usd: -1, period: 'year' } }] })).toEqual([
      'api_keys.0.budget.usd: must be >= 0',
      'api_keys.0.budget.period: must be one of day, week, month, total',
    ]);
    // A budget past 1e21 passed validate, then stopped the gateway from starting.
    expect(problems({ api_keys: [{ key: 'a', budget: { usd: 1e21, period: 'month' } }] })).toEqual(['api_keys.0.budget.usd: must be <= 1000000000000000']);
    expect(problems({ api_keys: [{ key: 'a', name: 'x' }, { key: 'b', name: 'x' }] })).toEqual(['api_keys.1.name: duplicate key name x']);
  });

  it('validates catalog pricing as decimal strings, per model and per endpoint', () => {
    const providers = { openai: { type: 'openai', base_url: 'https://api.openai.com/v1' } };
    const model = { id: 'openai/gpt-4o', pricing: { input: '0.0000025', output: '1e-5', cached: '0' }, endpoints: [{ provider: 'openai', model: 'gpt-4o', pricing: { input_cache_read: '0.0000000000000001' } }] };
    expect(problems({ providers, models: [model] })).toEqual([
      'models.0.pricing.output: must be a decimal string like "0.000003" (USD per token, at most 15 decimal places)',
      'models.0.pricing: Unrecognized key: "cached"',
      'models.0.endpoints.0.pricing.input_cache_read: must be a decimal string like "0.000003" (USD per token, at most 15 decimal places)',
    ]);
  });

  it('requires at least one API key', () => {
    expect(problems({ api_keys: [] })).toEqual(['api_keys: must list at least one key']);
  });

  it('parses a provider through its type adapter, with its own timeouts in ms', () => {
    const result = parse({ providers: { local: { type: 'openai', base_url: 'http://127.0.0.1:11434/v1', first_byte_timeout: '2m' } } });
    expect(result.success && result.data.providers['local']).toMatchObject({ type: 'openai', first_byte_timeout: 120_000 });
  });

  it('names an unknown provider type under its slug', () => {
    expect(problems({ providers: { x: { type: 'nope', base_url: 'http://x' } } })[0]).toMatch(/^providers\.x\.type: must be one of .*openai/);
  });

  it('names a bad base_url under its slug', () => {
    expect(problems({ providers: { x: { type: 'openai', base_url: 'not a url' } } })).toEqual(['providers.x.base_url: must be an http(s) URL']);
  });

  it('refuses a catalog endpoint whose provider is not configured', () => {
    expect(problems({ models: [{ id: 'a/b', endpoints: [{ provider: 'ghost', model: 'b' }] }] })[0]).toMatch(/^models\.0\.endpoints\.0\.provider: /);
  });

  it('refuses a catalog endpoint whose provider is not configured beside a bad key, and a duplicate key beside a bad model', () => {
    const ghost = { id: 'a/b', endpoints: [{ provider: 'ghost', model: 'b' }] };
    expect(problems({ api_keys: [''], models: [ghost] })).toEqual(['api_keys.0: must not be empty', 'models.0.endpoints.0.provider: must name a provider configured under providers (ghost is not)']);
    expect(problems({ api_keys: [{ key: 'a', name: 'x' }, { key: 'b', name: 'x' }], models: [{ id: 'plain', endpoints: [] }] })).toEqual([
      'models.0.id: must look like <provider>/<model>',
      'models.0.endpoints: must list at least one endpoint',
      'api_keys.1.name: duplicate key name x',
    ]);
  });

  it('refuses pricing that is not a decimal string', () => {
    const openai = { type: 'openai', base_url: 'https://api.openai.com/v1' };
    expect(problems({ providers: { openai }, models: [{ id: 'openai/x', pricing: { input: 0.000003 }, endpoints: [{ provider: 'openai', model: 'x' }] }] })[0]).toMatch(/^models\.0\.pricing\.input: /);
  });

  it('refuses a model id without a provider part', () => {
    expect(problems({ models: [{ id: 'plain', endpoints: [{ provider: 'p', model: 'x' }] }] })[0]).toBe('models.0.id: must look like <provider>/<model>');
  });
});

describe('gateway config keys', () => {
  function yamlProblems(gateway: Record<string, unknown>): readonly string[] {
    return validationProblems({
      receivers: { gateway: { api_keys: ['k'], ...gateway } },
      exporters: { debug: {} },
      service: { pipelines: { traces: { receivers: ['gateway'], exporters: ['debug'] } } },
    });
  }

  it('says what a provider slug holds that it must not: a "/" or whitespace', () => {
    const provider = { type: 'openai', base_url: 'http://x' };
    const words = 'a provider slug must not contain "/" or whitespace';
    expect(yamlProblems({ providers: { 'my provider': provider } })).toEqual([`receivers.gateway.providers.my provider: ${words}`]);
    expect(yamlProblems({ providers: { 'a/b': provider } })).toEqual([`receivers.gateway.providers.a/b: ${words}`]);
  });

  it('reports an unknown key anywhere in the section by its YAML path', () => {
    const problems = yamlProblems({
      api_keys: [{ key: 'k1', requests_per_minut: 5 }],
      providers: { up: { type: 'openai', base_url: 'http://127.0.0.1:1/v1', api_kye: 'x' }, g: { type: 'google', image_fetch: { max_sise: '1MiB' } } },
      models: [{ id: 'up/m', colour: 'red', endpoints: [{ provider: 'up', model: 'm', weight: 2 }] }],
      listen: '127.0.0.1:1',
    });
    expect(problems).toEqual(expect.arrayContaining([
      'receivers.gateway.api_keys[0].requests_per_minut: unknown key',
      'receivers.gateway.providers.up.api_kye: unknown key',
      'receivers.gateway.providers.g.image_fetch.max_sise: unknown key',
      'receivers.gateway.models[0].colour: unknown key',
      'receivers.gateway.models[0].endpoints[0].weight: unknown key',
      'receivers.gateway.listen: unknown key',
    ]));
    expect(problems).toHaveLength(6);
  });

  it('words key and provider problems as the rest of the config does', () => {
    expect(yamlProblems({
      api_keys: [5, { name: 'n' }, { key: 'k2', budget: { usd: -1, period: 'year' } }],
      providers: { up: { type: 'openai', base_url: 7 } },
    })).toEqual([
      'receivers.gateway.api_keys[0]: must be a key string or a key record ({ key, name, ... })',
      'receivers.gateway.api_keys[1].key: required',
      'receivers.gateway.api_keys[2].budget.usd: must be >= 0',
      'receivers.gateway.api_keys[2].budget.period: must be one of day, week, month, total',
      'receivers.gateway.providers.up.base_url: must be an http(s) URL',
    ]);
  });

  it('takes the listener keys, and refuses a header timeout longer than the request timeout', () => {
    expect(yamlProblems({ max_connections: 10, idle_timeout: '5s', cors: { allowed_origins: ['https://*.example.com'] } })).toEqual([]);
    expect(yamlProblems({ read_header_timeout: '2m', read_timeout: '1m' })).toEqual(['receivers.gateway.read_header_timeout: must not be longer than read_timeout']);
  });

  it('refuses one key name given to different keys by two gateways, and takes one key shared under its name', () => {
    function twoGateways(second: unknown[]): readonly string[] {
      const raw = {
        receivers: {
          gateway: { api_keys: [{ key: 'sk-alpha', name: 'alpha' }, 'sk-bare'] },
          'gateway/two': { endpoint: '127.0.0.1:8788', api_keys: second },
        },
        exporters: { debug: {} },
        service: { pipelines: { traces: { receivers: ['gateway', 'gateway/two'], exporters: ['debug'] } } },
      };
      return validationProblems(raw);
    }
    expect(twoGateways([{ key: 'other-tenant', name: 'alpha' }])).toEqual(['receivers.gateway/two.api_keys[0].name: key name alpha is given to another key in gateway; usage is kept by name, so each name must stand for one key']);
    expect(twoGateways([{ key: 'sk-alpha', name: 'alpha' }, 'sk-bare'])).toEqual([]);
    expect(twoGateways([{ key: 'other-tenant', name: 'beta' }])).toEqual([]);
  });

  it('refuses two listeners on one address, which would fail to bind at run, and lets port 0 and other ports be', () => {
    function listeners(gatewayEndpoint: string, admin: string): readonly string[] {
      const raw = {
        receivers: {
          otlp: { protocols: { http: { endpoint: '127.0.0.1:24400' }, grpc: { endpoint: '127.0.0.1:24401' } } },
          gateway: { endpoint: gatewayEndpoint, api_keys: ['k'] },
        },
        exporters: { debug: {} },
        service: { admin: { endpoint: admin }, pipelines: { traces: { receivers: ['otlp', 'gateway'], exporters: ['debug'] } } },
      };
      return validationProblems(raw);
    }
    expect(listeners('127.0.0.1:24400', ':24401')).toEqual([
      'receivers.gateway.endpoint: 127.0.0.1:24400 takes the port of receivers.otlp.protocols.http.endpoint (127.0.0.1:24400); two listeners cannot share an address',
      'service.admin.endpoint: :24401 takes the port of receivers.otlp.protocols.grpc.endpoint (127.0.0.1:24401); two listeners cannot share an address',
    ]);
    expect(listeners('127.0.0.2:24400', '127.0.0.1:0')).toEqual([]);
    expect(listeners('127.0.0.1:0', '127.0.0.1:0')).toEqual([]);
  });

  it('refuses two listeners on one address however its host is written: localhost, another spelling of an IP, every interface', () => {
    function clash(first: string, second: string): readonly string[] {
      const raw = {
        receivers: { otlp: { protocols: { http: { endpoint: first }, grpc: { endpoint: second } } } },
        exporters: { debug: {} },
        service: { pipelines: { traces: { receivers: ['otlp'], exporters: ['debug'] } } },
      };
      return validationProblems(raw);
    }
    const problem = (first: string, second: string) => [`receivers.otlp.protocols.grpc.endpoint: ${second} takes the port of receivers.otlp.protocols.http.endpoint (${first}); two listeners cannot share an address`];
    // The system's resolver decides which loopback localhost binds, so it may be either.
    expect(clash('127.0.0.1:27311', 'localhost:27311')).toEqual(problem('127.0.0.1:27311', 'localhost:27311'));
    expect(clash('[::1]:27311', 'LocalHost:27311')).toEqual(problem('[::1]:27311', 'LocalHost:27311'));
    expect(clash('[0:0:0:0:0:0:0:1]:27311', '[::1]:27311')).toEqual(problem('[0:0:0:0:0:0:0:1]:27311', '[::1]:27311'));
    expect(clash('0.0.0.0:27311', '[::1]:27311')).toEqual(problem('0.0.0.0:27311', '[::1]:27311'));
    expect(clash('[::]:27311', 'localhost:27311')).toEqual(problem('[::]:27311', 'localhost:27311'));
    expect(clash('127.0.0.1:27311', '[::1]:27311')).toEqual([]);
    expect(clash('localhost:27311', 'localhost:27312')).toEqual([]);
  });
});
