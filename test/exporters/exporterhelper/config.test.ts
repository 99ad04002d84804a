import { parseRetryAfter } from '../../../src/exporters/otlphttp/retry-after.js';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/config/load.js';
import { builtinRegistry } from '../../../src/components.js';
import { ConfigError } from '../../../src/shared/errors.js';
import {
  createDefaultQueuedSenderConfig,
  queuedSenderConfigSchema,
  retryDelayMs,
} from '../../../src/exporters/exporterhelper/index.js';

describe('queued sender config', () => {
  it('fills every key from the defaults when the section is empty', () => {
    expect(queuedSenderConfigSchema.parse({})).toEqual(createDefaultQueuedSenderConfig());
  });

  it('names the key when max_interval is below initial_interval', () => {
    const result = queuedSenderConfigSchema.safeParse({ retry_on_failure: { initial_interval: 5_000, max_interval: 1_000 } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['retry_on_failure', 'max_interval']);
    expect(result.error?.issues[0]?.message).toContain('max_interval must be >= initial_interval');
  });

  it('reads sizes and durations with units through the config loader, numbers still working', () => {
    const config = parseConfigText(withQueue('{ max_size: 512MiB, max_batch_bytes: 4096, flush_timeout: 200ms }', '{ initial_interval: 1s, max_interval: 30000, max_age: 24h }'), {
      registry: builtinRegistry(),
      env: {},
    });
    expect(config.exporters.get('otlphttp/acme')?.config).toMatchObject({
      sending_queue: { max_size: 512 * 1024 * 1024, max_batch_bytes: 4096, flush_timeout: 200 },
      retry_on_failure: { initial_interval: 1_000, max_interval: 30_000, max_age: 24 * 3_600_000 },
    });
  });

  it('names the key of a size or duration it cannot read', () => {
    const problems = configProblems(withQueue('{ max_size: lots }', '{ initial_interval: soon }'));
    expect(problems.some((p) => p.includes('sending_queue.max_size') && p.includes('size like 4MiB'))).toBe(true);
    expect(problems.some((p) => p.includes('retry_on_failure.initial_interval') && p.includes('duration like 200ms'))).toBe(true);
  });

  it('takes a max_size below 8MiB alone, batching up to the whole queue', () => {
    const config = parseConfigText(withQueue('{ max_size: 4MiB }', '{}'), { registry: builtinRegistry(), env: {} });
    expect(config.exporters.get('otlphttp/acme')?.config).toMatchObject({ sending_queue: { max_size: 4 * 1024 * 1024, max_batch_bytes: 4 * 1024 * 1024 } });
  });

  it('still names max_batch_bytes when it is given larger than max_size', () => {
    expect(configProblems(withQueue('{ max_size: 4MiB, max_batch_bytes: 5MiB }', '{}'))).toEqual([
      'exporters.otlphttp/acme.sending_queue.max_batch_bytes: max_batch_bytes must be <= max_size',
    ]);
  });

  it('rejects an unknown storage kind', () => {
    expect(queuedSenderConfigSchema.safeParse({ sending_queue: { storage: 'tape' } }).success).toBe(false);
  });
});

describe('retryDelayMs', () => {
  it('grows exponentially up to max_interval and honours Retry-After', () => {
    const policy = { initialIntervalMs: 1_000, maxIntervalMs: 30_000 };
    const midpoint = (): number => 0.5; // no jitter
    expect(retryDelayMs(policy, 0, undefined, midpoint)).toBe(1_000);
    expect(retryDelayMs(policy, 2, undefined, midpoint)).toBe(2_250);
    expect(retryDelayMs(policy, 50, undefined, midpoint)).toBe(30_000);
    expect(retryDelayMs(policy, 3, 7_000, midpoint)).toBe(7_000);
    // Retry-After lengthens the wait, never shortens it below the backoff.
    expect(retryDelayMs(policy, 2, 0, midpoint)).toBe(2_250);
    expect(retryDelayMs(policy, 50, 1_000, midpoint)).toBe(30_000);
  });

  it('reads Retry-After as whole seconds or an HTTP date, and ignores anything else', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wednesday, 21-Oct-15 07:28:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed Oct 21 07:28:05 2015', now)).toBe(5_000);
    expect(parseRetryAfter('Tue, 20 Oct 2015 07:28:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

function withQueue(sendingQueue: string, retry: string): string {
  return `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:4318 } } }
exporters:
  otlphttp/acme:
    endpoint: http://127.0.0.1:1/v1/traces
    sending_queue: ${sendingQueue}
    retry_on_failure: ${retry}
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [otlphttp/acme] }
`;
}

function configProblems(text: string): readonly string[] {
  try {
    parseConfigText(text, { registry: builtinRegistry(), env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}
