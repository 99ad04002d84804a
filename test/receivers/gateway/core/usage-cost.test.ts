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

  it('puts cost in the top-level usage, not in a usage nested in a later object (Groq x_groq.usage)', () => {
    const text = '{"id":"x","usage":{"prompt_tokens":1},"x_groq":{"id":"r","usage":{"queue_time":0.01}}}';
    const out = insertUsageCost(text, 0.5);
    expect(out).toBe(text.replace('"prompt_tokens":1}', '"prompt_tokens":1,"cost":0.5}'));
    expect(JSON.parse(out).x_groq).toEqual({ id: 'r', usage: { queue_time: 0.01 } });
  });

  it('leaves text without a usage object unchanged', () => {
    expect(insertUsageCost('{"choices":[]}', 1)).toBe('{"choices":[]}');
    expect(insertUsageCost('{"usage":null}', 1)).toBe('{"usage":null}');
    expect(insertUsageCost('{"x_groq":{"usage":{"queue_time":0.01}}}', 1)).toBe('{"x_groq":{"usage":{"queue_time":0.01}}}');
  });
});
