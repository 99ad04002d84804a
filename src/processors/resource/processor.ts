// Stamps resource attributes. Only the Resource field of each ResourceSpans
// is rewritten (wire.ts); spans pass through as bytes. Requests from one
// deployment share a handful of distinct resources, so results are cached
// by the resource's encoded bytes.
import type { Processor } from '../../core/component.js';
import { TraceBatch } from '../../otlp/batch.js';
import type { AnyValue, Resource } from '../../otlp/model.js';
import { decodeResource, encodeResource } from '../../otlp/proto-codec.js';
import { rewriteResources } from '../../otlp/wire.js';
import type { AttributeAction, AttributeScalar, ResourceConfig } from './config.js';

const CACHE_ENTRIES = 1024;
const EMPTY = new Uint8Array(0);

function toAnyValue(value: AttributeScalar): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  // Beyond 2^53 a YAML number is no longer an exact integer (1e21 would print as "1e+21"): a double says what it is.
  return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/**
 * Applies the actions in order. A key a sender repeated counts as one: delete
 * removes every copy, and upsert or update leaves the stamped value alone,
 * so no stale copy of platform.projectId survives beside the new one.
 */
export function applyActions(resource: Resource, actions: readonly AttributeAction[]): Resource {
  let attributes = [...resource.attributes];
  for (const { key, value, action } of actions) {
    const at = attributes.findIndex((kv) => kv.key === key);
    if (action === 'delete') {
      if (at !== -1) attributes = attributes.filter((kv) => kv.key !== key);
      continue;
    }
    if (value === undefined) continue;
    const entry = { key, value: toAnyValue(value) };
    if (at === -1 && action !== 'update') attributes.push(entry);
    else if (at !== -1 && action !== 'insert') attributes = attributes.filter((kv, i) => kv.key !== key || i === at).map((kv, i) => (i === at ? entry : kv));
  }
  return { ...resource, attributes };
}

export function createResourceProcessor(config: ResourceConfig): Processor {
  const cache = new Map<string, Uint8Array>();

  function stamp(resource: Uint8Array | undefined): Uint8Array {
    const bytes = resource ?? EMPTY;
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let stamped = cache.get(key);
    if (stamped === undefined) {
      stamped = encodeResource(applyActions(decodeResource(bytes), config.actions));
      if (cache.size >= CACHE_ENTRIES) cache.clear();
      cache.set(key, stamped);
    }
    return stamped;
  }

  return {
    process: function stampResources(batch) {
      if (config.actions.length === 0) return batch;
      return TraceBatch.fromIndex(rewriteResources(batch.wire(), stamp));
    },
  };
}
