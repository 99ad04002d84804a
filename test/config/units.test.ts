import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configErrorMap, formatIssues } from '../../src/config/format-issues.js';
import { byteSize, duration, parseByteSize, parseDuration } from '../../src/shared/units.js';

function problems(schema: z.ZodType, input: unknown): string[] {
  const result = schema.safeParse(input, { error: configErrorMap });
  return result.success ? [] : formatIssues(result.error.issues, ['exporters', 'x']);
}

describe('durations', () => {
  it('reads ms, s, m, h and d', () => {
    expect([parseDuration('200ms'), parseDuration('5s'), parseDuration('1m'), parseDuration('1h'), parseDuration('30d')]).toEqual([200, 5_000, 60_000, 3_600_000, 2_592_000_000]);
  });

  it('reads compound and fractional durations', () => {
    expect([parseDuration('1m30s'), parseDuration('1.5s')]).toEqual([90_000, 1_500]);
  });

  it('reads a plain number as milliseconds', () => {
    expect([parseDuration(250), parseDuration('250')]).toEqual([250, 250]);
  });

  it('refuses unknown units', () => {
    expect([parseDuration('5 days'), parseDuration('5'), parseDuration('500us'), parseDuration('')]).toEqual([undefined, 5, undefined, undefined]);
  });

  it('reads a sign as Go does, leaving a negative duration for the schema to refuse', () => {
    expect([parseDuration('+5s'), parseDuration('-5s'), parseDuration(-1), parseDuration('-0')]).toEqual([5_000, -5_000, -1, 0]);
    const schema = z.strictObject({ timeout: duration() });
    expect(problems(schema, { timeout: '-5s' })).toEqual(['exporters.x.timeout: must not be negative']);
  });

  it('parses in a schema and names the key of a bad value', () => {
    const schema = z.strictObject({ timeout: duration() });
    expect(schema.parse({ timeout: '30s' })).toEqual({ timeout: 30_000 });
    expect(problems(schema, { timeout: 'soon' })).toEqual(['exporters.x.timeout: must be a duration like 200ms, 5s, 1m or a number of milliseconds']);
    expect(problems(schema, {})).toEqual(['exporters.x.timeout: required']);
  });
});

describe('sizes', () => {
  it('reads binary and decimal units and byte counts', () => {
    expect([parseByteSize('4MiB'), parseByteSize('512KiB'), parseByteSize('1GiB'), parseByteSize('10MB'), parseByteSize('1024'), parseByteSize(7)]).toEqual([
      4 * 1024 ** 2, 512 * 1024, 1024 ** 3, 10_000_000, 1024, 7,
    ]);
  });

  it('refuses unknown units and fractions of a byte count', () => {
    expect([parseByteSize('4 parsecs'), parseByteSize(1.5), parseByteSize('-1')]).toEqual([undefined, undefined, undefined]);
  });

  it('parses in a schema and names the key of a bad value', () => {
    const schema = z.strictObject({ max_request_body_size: byteSize() });
    expect(schema.parse({ max_request_body_size: '64MiB' })).toEqual({ max_request_body_size: 64 * 1024 ** 2 });
    expect(problems(schema, { max_request_body_size: true })).toEqual(['exporters.x.max_request_body_size: must be a size like 4MiB, 512KiB or a byte count']);
  });
});
