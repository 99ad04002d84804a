import { describe, expect, it } from 'vitest';
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
  });
});
