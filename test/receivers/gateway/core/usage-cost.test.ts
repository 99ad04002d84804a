import { describe, expect, it } from 'vitest';
import { insertUsageCost } from '../../../../src/receivers/gateway/core/usage-cost.js';

describe('insertUsageCost', () => {
  it('adds cost as the last member of the top-level usage object, keeping every other byte', () => {
    const text = '{"id":"x","choices":[{"message":{"content":"a \\"usage\\": {} }"}}],"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":1}},"system_fingerprint":"fp"}';
    const out = insertUsageCost(text, 0.0079874);
    expect(out).toBe(text.replace('"cached_tokens":1}}', '"cached_tokens":1},"cost":0.0079874}'));
    expect(JSON.parse(out).usage.cost).toBe(0.0079874);
  });

  it('handles pretty-printed and empty usage objects and wins over an upstream cost', () => {
    expect(JSON.parse(insertUsageCost('{\n  "usage" :  { }\n}', 1e-7))).toEqual({ usage: { cost: 1e-7 } });
    expect(JSON.parse(insertUsageCost('{"usage":{"cost":99,"prompt_tokens":1}}', 0.5)).usage.cost).toBe(0.5);
  });

  it('leaves text without a usage object unchanged', () => {
    expect(insertUsageCost('{"choices":[]}', 1)).toBe('{"choices":[]}');
    expect(insertUsageCost('{"usage":null}', 1)).toBe('{"usage":null}');
  });
});
