import { describe, expect, it } from 'vitest';
import { createDefaultConfig, gatewayConfigSchema } from '../../../src/receivers/gateway/config.js';

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

  it('accepts api_keys as strings or objects with requests_per_minute', () => {
    const result = parse({ api_keys: ['a', { key: 'b', requests_per_minute: 60 }] });
    expect(result.success && result.data.api_keys).toEqual(['a', { key: 'b', requests_per_minute: 60 }]);
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

  it('refuses pricing that is not a decimal string', () => {
    const openai = { type: 'openai', base_url: 'https://api.openai.com/v1' };
    expect(problems({ providers: { openai }, models: [{ id: 'openai/x', pricing: { input: 0.000003 }, endpoints: [{ provider: 'openai', model: 'x' }] }] })[0]).toMatch(/^models\.0\.pricing\.input: /);
  });

  it('refuses a model id without a provider part', () => {
    expect(problems({ models: [{ id: 'plain', endpoints: [{ provider: 'p', model: 'x' }] }] })[0]).toBe('models.0.id: must look like <provider>/<model>');
  });
});
