import { describe, expect, it } from 'vitest';
import { validationProblems } from '../../helpers/validate.js';
import { parseConfig } from './harness.js';

const HTTP_LIMITS = { max_connections: 10_000, read_header_timeout: 10_000, read_timeout: 60_000, idle_timeout: 60_000 };
const GRPC_LIMITS = { max_connections: 10_000, read_header_timeout: 10_000, read_timeout: 60_000, max_concurrent_streams: 100, max_connection_idle: 60_000, max_connection_age_grace: 5_000 };

function problemsOf(receiver: unknown): readonly string[] {
  const raw = {
    receivers: { otlp: receiver },
    exporters: {},
    service: { pipelines: { traces: { receivers: ['otlp'], exporters: [] } } },
  };
  return validationProblems(raw).filter((p) => p.startsWith('receivers.otlp'));
}

describe('otlp receiver config', () => {
  it('enables a protocol listed with an empty mapping with its defaults', () => {
    expect(parseConfig({ protocols: { http: {} } })).toEqual({
      protocols: { http: { endpoint: { host: '127.0.0.1', port: 4318 }, max_request_body_size: 64 * 1024 * 1024, ...HTTP_LIMITS } },
    });
  });

  it('enables a protocol listed with no value (YAML null) with its defaults', () => {
    expect(parseConfig({ protocols: { grpc: null } })).toEqual({
      protocols: { grpc: { endpoint: { host: '127.0.0.1', port: 4317 }, max_recv_msg_size: 64 * 1024 * 1024, ...GRPC_LIMITS } },
    });
  });

  it('reads sizes and IPv6 endpoints', () => {
    const config = parseConfig({ protocols: { http: { endpoint: '[::1]:0', max_request_body_size: '512KiB' } } });
    expect(config.protocols.http).toEqual({ endpoint: { host: '::1', port: 0 }, max_request_body_size: 512 * 1024, ...HTTP_LIMITS });
  });

  it('requires at least one protocol, naming the key', () => {
    expect(problemsOf({ protocols: {} })).toEqual(['receivers.otlp.protocols: must enable at least one of http, grpc']);
    expect(problemsOf(null)).toEqual(['receivers.otlp.protocols: must enable at least one of http, grpc']);
  });

  it('reads an endpoint without a host (every interface), as the collector does', () => {
    const config = parseConfig({ protocols: { http: { endpoint: ':4318' }, grpc: { endpoint: ':4317' } } });
    expect(config.protocols.http?.endpoint).toEqual({ host: '', port: 4318 });
    expect(config.protocols.grpc?.endpoint).toEqual({ host: '', port: 4317 });
  });

  it('reports a bad endpoint, a bad size and an unknown key with their paths', () => {
    const problems = problemsOf({ protocols: { http: { endpoint: 'localhost', max_request_body_size: 'lots' }, grpc: { max_recv_msg_size: 0, colour: 'red' } } });
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^receivers\.otlp\.protocols\.http\.endpoint: must be host:port/),
      expect.stringMatching(/^receivers\.otlp\.protocols\.http\.max_request_body_size: must be a size/),
      expect.stringMatching(/^receivers\.otlp\.protocols\.grpc\.max_recv_msg_size: must be greater than 0/),
      'receivers.otlp.protocols.grpc.colour: unknown key',
    ]));
  });

  it('refuses a connection timer longer than a Node timer can hold (grpc-js would fire it at once), naming the key', () => {
    const problems = problemsOf({ protocols: { http: { idle_timeout: '30d' }, grpc: { max_connection_age: '30d', max_connection_idle: '22d' } } });
    expect(problems).toEqual(expect.arrayContaining([
      'receivers.otlp.protocols.http.idle_timeout: must be at most 21d',
      'receivers.otlp.protocols.grpc.max_connection_age: must be at most 21d',
      'receivers.otlp.protocols.grpc.max_connection_idle: must be at most 21d',
    ]));
    expect(problemsOf({ protocols: { grpc: { max_connection_age: '21d', max_connection_idle: 0, max_connection_age_grace: 0 } } })).toEqual([]);
  });

  it('takes every listener\'s timeouts on gRPC too; idle_timeout is max_connection_idle by its HTTP name', () => {
    const grpc = parseConfig({ protocols: { grpc: { read_header_timeout: '2s', read_timeout: '30s', idle_timeout: '45s' } } }).protocols.grpc;
    expect(grpc).toMatchObject({ read_header_timeout: 2_000, read_timeout: 30_000, max_connection_idle: 45_000 });
    expect(grpc).not.toHaveProperty('idle_timeout');
    expect(parseConfig({ protocols: { grpc: { idle_timeout: '45s', max_connection_idle: '45s' } } }).protocols.grpc?.max_connection_idle).toBe(45_000);
    expect(parseConfig({ protocols: { grpc: { idle_timeout: 0 } } }).protocols.grpc?.max_connection_idle).toBe(0);
  });

  it('refuses two different idle limits and a zero read_header_timeout on gRPC, naming the key', () => {
    expect(problemsOf({ protocols: { grpc: { idle_timeout: '30s', max_connection_idle: '60s', read_header_timeout: 0 } } })).toEqual([
      'receivers.otlp.protocols.grpc.idle_timeout: is the same limit as max_connection_idle on a gRPC listener: give one of them, or the same value',
      'receivers.otlp.protocols.grpc.read_header_timeout: must be greater than 0',
    ]);
  });
});
