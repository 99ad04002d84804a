import { describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../../src/components.js';
import { validateConfig } from '../../../src/config/validate.js';
import { gatewayCatalogs } from '../../../src/admin/stats/catalog.js';

describe('the console catalog', () => {
  it('shows each endpoint at the prices it charges: its own over the model\'s, cache prices left out at the input price', () => {
    const config = validateConfig(
      {
        receivers: {
          gateway: {
            api_keys: ['k'],
            providers: { a: { type: 'openai', base_url: 'http://127.0.0.1:1/v1' }, b: { type: 'openai', base_url: 'http://127.0.0.1:2/v1' } },
            models: [{ id: 'a/m', pricing: { input: '0.000015', output: '0.000015' }, endpoints: [{ provider: 'a', model: 'm' }, { provider: 'b', model: 'm', pricing: { output: '0.00003', input_cache_read: '0.000001' } }] }],
          },
        },
        exporters: { debug: {} },
        service: { pipelines: { traces: { receivers: ['gateway'], exporters: ['debug'] } } },
      },
      builtinRegistry(),
    );
    const [model] = gatewayCatalogs(config)[0]?.models ?? [];
    expect(model?.pricing).toEqual({ input: '0.000015', output: '0.000015', input_cache_read: '0.000015', input_cache_write: '0.000015' });
    expect(model?.endpoints).toEqual([
      { provider: 'a', model: 'm', pricing: { input: '0.000015', output: '0.000015', input_cache_read: '0.000015', input_cache_write: '0.000015' } },
      { provider: 'b', model: 'm', pricing: { input: '0.000015', output: '0.00003', input_cache_read: '0.000001', input_cache_write: '0.000015' } },
    ]);
  });
});
