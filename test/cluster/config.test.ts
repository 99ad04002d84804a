import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { ConfigError } from '../../src/shared/errors.js';
import { fakeRegistry } from '../core/fakes.js';

function config(cluster: string): string {
  return `
receivers:
  fakein: {}
exporters:
  fakeout: {}
service:
${cluster}
  pipelines:
    traces: { receivers: [fakein], exporters: [fakeout] }
`;
}

function problemsOf(text: string, env: Record<string, string> = {}): readonly string[] {
  try {
    parseConfigText(text, { registry: fakeRegistry(), env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('service.cluster', () => {
  it('is absent by default: one instance, nothing shared', () => {
    expect(parseConfigText(config(''), { registry: fakeRegistry(), env: {} }).service.cluster).toBeUndefined();
  });

  it('fills key_prefix, timeout and an empty instance_id (a random id per start)', () => {
    const parsed = parseConfigText(config('  cluster: { redis: { url: "redis://127.0.0.1:6379/0" }, instance_id: "${env:HOSTNAME:-}" }'), { registry: fakeRegistry(), env: {} });
    expect(parsed.service.cluster).toEqual({ redis: { url: 'redis://127.0.0.1:6379/0', key_prefix: 'sluice:', timeout: 1_000 }, instance_id: '' });
  });

  it('accepts rediss:// for TLS', () => {
    expect(problemsOf(config('  cluster: { redis: { url: "rediss://user:pw@redis.internal:6380" } }'))).toEqual([]);
  });

  it('names the YAML path of each bad key', () => {
    expect(problemsOf(config('  cluster: { redis: { url: "http://127.0.0.1:6379" } }'))).toEqual(['service.cluster.redis.url: must be a redis:// or rediss:// URL']);
    expect(problemsOf(config('  cluster: { redis: { url: "redis://127.0.0.1:6379/zero" } }'))).toEqual(['service.cluster.redis.url: the path must be a database number (redis://host:6379/0)']);
    expect(problemsOf(config('  cluster: { redis: { url: "redis://x", timeout: soon } }'))[0]).toMatch(/^service\.cluster\.redis\.timeout: /);
    expect(problemsOf(config('  cluster: { redis: { url: "redis://x", timeout: 0 } }'))).toEqual(['service.cluster.redis.timeout: must be greater than 0']);
    expect(problemsOf(config('  cluster: { instance_id: a }'))).toEqual(['service.cluster.redis: required: { url: redis://host:6379/0 }']);
    expect(problemsOf(config('  cluster: { redis: { url: "redis://x", prefix: "a:" } }'))).toEqual(['service.cluster.redis.prefix: unknown key']);
  });
});
