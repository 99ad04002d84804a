import { describe, expect, it } from 'vitest';
import { Catalog } from '../../../../src/receivers/gateway/core/catalog.js';
import { modelSchema } from '../../../../src/receivers/gateway/core/catalog-config.js';

describe('catalog prices of direct models', () => {
  it("prices Gemini's models/<id> as the catalog prices <id>, so the prefix reaches no priced model for free", () => {
    const model = modelSchema.parse({ id: 'google/gemini-pro', pricing: { input: '0.000001', output: '0.000002' }, endpoints: [{ provider: 'gg', model: 'gemini-pro' }] });
    const catalog = new Catalog([model], 0);
    const priced = catalog.upstreamPrices('gg', 'gemini-pro');
    expect(priced).toBeDefined();
    expect(catalog.upstreamPrices('gg', 'models/gemini-pro')).toEqual(priced);
    expect(catalog.upstreamPrices('gg', 'gemini-flash')).toBeUndefined();
  });

  it("prices another name of a model the catalog sends (a snapshot's date, its alias, a Bedrock inference profile) as the catalog prices it, an exact match first", () => {
    const models = [
      { id: 'anthropic/sonnet', pricing: { input: '0.000003', output: '0.000015' }, endpoints: [{ provider: 'ant', model: 'claude-sonnet-4-5' }, { provider: 'br', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }] },
      { id: 'openai/4o-may', pricing: { input: '0.000005', output: '0.000015' }, endpoints: [{ provider: 'oai', model: 'gpt-4o-2024-05-13' }] },
      { id: 'openai/4o', pricing: { input: '0.0000025', output: '0.00001' }, endpoints: [{ provider: 'oai', model: 'gpt-4o' }] },
    ].map((m) => modelSchema.parse(m));
    const catalog = new Catalog(models, 0);
    const sonnet = catalog.upstreamPrices('ant', 'claude-sonnet-4-5');
    expect(sonnet).toBeDefined();
    expect(catalog.upstreamPrices('ant', 'claude-sonnet-4-5-20250929')).toEqual(sonnet);
    expect(catalog.upstreamPrices('ant', 'claude-sonnet-4-5-latest')).toEqual(sonnet);
    expect(catalog.upstreamPrices('br', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toEqual(catalog.upstreamPrices('br', 'anthropic.claude-sonnet-4-5-20250929-v1:0'));
    expect(catalog.upstreamPrices('br', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBeDefined();
    // A snapshot the catalog lists keeps its own price; one it does not list goes by the alias, though another snapshot comes first.
    expect(catalog.upstreamPrices('oai', 'gpt-4o-2024-05-13')?.input).not.toEqual(catalog.upstreamPrices('oai', 'gpt-4o')?.input);
    expect(catalog.upstreamPrices('oai', 'gpt-4o-2024-08-06')).toEqual(catalog.upstreamPrices('oai', 'gpt-4o'));
    // Another provider, or another model, is not matched.
    expect(catalog.upstreamPrices('oai', 'claude-sonnet-4-5-20250929')).toBeUndefined();
    expect(catalog.upstreamPrices('ant', 'claude-sonnet-4')).toBeUndefined();
    expect(catalog.upstreamPrices('br', 'us.anthropic.claude-opus-4-1-20250805-v1:0')).toBeUndefined();
  });
});
