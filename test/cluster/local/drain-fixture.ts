// A stored API drain, as the local drain store's tests write and read it.
import type { DrainDefinition } from '../../../src/exporters/drains/definition.js';

export const DRAIN: DrainDefinition = {
  id: 'drn_abcdefghijklmnop',
  name: 'honeycomb',
  source: 'api',
  enabled: true,
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_001,
  delivery: { url: 'https://api.honeycomb.io/v1/traces', encoding: 'protobuf', compression: 'gzip', headers: { 'x-team': 'k' }, secret: 's3cret', insecure: false },
  sampling: [{ environment: 'production', percentage: 10, path_prefix: '/api' }],
};
