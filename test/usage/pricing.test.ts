import { describe, expect, it } from 'vitest';
import { costToNumber, formatUsd, parseUsd, usdNumberToCost } from '../../src/shared/money.js';
import { costOf, mergePricing, parsePrices } from '../../src/usage/pricing.js';
import { tokensOf } from '../../src/shared/tokens.js';

describe('money', () => {
  it('parses decimal USD strings into exact 10^-15 units and formats them back', () => {
    expect(parseUsd('0.000003')).toBe(3_000_000_000n);
    expect(parseUsd('0.000000000000001')).toBe(1n);
    expect(parseUsd('12')).toBe(12_000_000_000_000_000n);
    expect(formatUsd(1_500_000_000n)).toBe('0.0000015');
    expect(formatUsd(0n)).toBe('0');
    expect(formatUsd(parseUsd('50.25'))).toBe('50.25');
  });

  it('refuses prices that are not plain decimals or have more than 15 places', () => {
    for (const bad of ['-1', '1e-6', '0.0000000000000001', '', '.5', '1.']) expect(() => parseUsd(bad), bad).toThrow();
  });

  it('turns YAML budget numbers into exact units', () => {
    expect(usdNumberToCost(0.0001)).toBe(parseUsd('0.0001'));
    expect(usdNumberToCost(50)).toBe(parseUsd('50'));
    expect(usdNumberToCost(0)).toBe(0n);
    // As written, not as the double holds them (50.100000000000001...).
    expect(usdNumberToCost(50.1)).toBe(parseUsd('50.1'));
    expect(usdNumberToCost(123.456)).toBe(parseUsd('123.456'));
    expect(usdNumberToCost(1e-7)).toBe(parseUsd('0.0000001'));
    expect(usdNumberToCost(1e15)).toBe(parseUsd('1000000000000000'));
    expect(usdNumberToCost(0.1234567890123456)).toBe(parseUsd('0.123456789012346'));
  });

  it('sums a million tiny costs without drift, where floats would', () => {
    const price = parseUsd('0.0000001');
    let exact = 0n;
    let float = 0;
    for (let i = 0; i < 1_000_000; i++) {
      exact += price;
      float += 0.0000001;
    }
    expect(formatUsd(exact)).toBe('0.1');
    expect(costToNumber(exact)).toBe(0.1);
    expect(float).not.toBe(0.1);
  });
});

describe('pricing', () => {
  const prices = parsePrices({ input: '0.000003', output: '0.000015', input_cache_read: '0.0000003', input_cache_write: '0.00000375' });

  it('charges uncached input, cache reads, cache writes and output at their own prices', () => {
    const tokens = tokensOf({ prompt_tokens: 1000, completion_tokens: 200, prompt_tokens_details: { cached_tokens: 600, cache_creation_tokens: 100 } });
    // 300 x 3000 + 600 x 300 + 100 x 3750 + 200 x 15000 nano-dollars
    expect(formatUsd(costOf(tokens, prices))).toBe('0.004455');
  });

  it('prices cache tokens at the input price when the catalog gives no cache prices', () => {
    const plain = parsePrices({ input: '0.000001', output: '0.000002' });
    expect(costOf(tokensOf({ prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } }), plain)).toBe(parseUsd('0.00002'));
  });

  it('lets an endpoint override the model price by price', () => {
    expect(mergePricing({ input: '0.000003', output: '0.000015' }, { output: '0.00001' })).toEqual({ input: '0.000003', output: '0.00001' });
    expect(mergePricing({ input: '1' }, undefined)).toEqual({ input: '1' });
  });

  it('ignores negative or fractional token counts from upstreams', () => {
    expect(tokensOf({ prompt_tokens: -5, completion_tokens: 1.5 })).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 });
  });
});
