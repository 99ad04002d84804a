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
});
