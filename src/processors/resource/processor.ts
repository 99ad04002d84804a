// Stamps resource attributes. Only the Resource field of each ResourceSpans
// is rewritten (wire.ts); spans pass through as bytes. Within the Resource,
// only the attributes an action names change: every other field (the
// dropped count, fields of later OTLP versions such as entity_refs) and
// every other attribute is copied as it came. Requests from one deployment
// share a handful of distinct resources, so results are cached by the
// resource's encoded bytes.
import protobuf from 'protobufjs';
import type { Processor } from '../../core/component.js';
import { TraceBatch } from '../../otlp/batch.js';
import type { AnyValue } from '../../otlp/model.js';
import { encodeResourceAttribute } from '../../otlp/proto-codec.js';
import { rewriteResources } from '../../otlp/wire.js';
import { WIRE_LEN } from '../../otlp/wire-reader.js';
import type { AttributeAction, AttributeScalar, ResourceConfig } from './config.js';

const CACHE_ENTRIES = 1024;
const EMPTY = new Uint8Array(0);
/** Resource.attributes and KeyValue.key: field 1, length-delimited. */
const FIELD_1_LEN = (1 << 3) | WIRE_LEN;

function toAnyValue(value: AttributeScalar): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  // Beyond 2^53 a YAML number is no longer an exact integer (1e21 would print as "1e+21"): a double says what it is.
  return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/** A top-level field of an encoded Resource, as it came; an attribute names its key. */
interface ResourceField {
  readonly key: string | undefined;
  readonly bytes: Uint8Array;
}

/** The key of an encoded KeyValue (the last one, as protobuf reads a repeated singular field). */
function keyOf(keyValue: Uint8Array): string | undefined {
  const reader = protobuf.Reader.create(keyValue);
  let key: string | undefined;
  while (reader.pos < keyValue.length) {
    const tag = reader.uint32();
    if (tag !== FIELD_1_LEN) {
      reader.skipType(tag & 7);
      continue;
    }
    const length = reader.uint32();
    key = Buffer.from(keyValue.buffer, keyValue.byteOffset, keyValue.byteLength).toString('utf8', reader.pos, reader.pos + length);
    reader.pos += length;
  }
  return key;
}

/** The fields of an encoded Resource (checked at intake), in order. */
function fieldsOf(resource: Uint8Array): ResourceField[] {
  const reader = protobuf.Reader.create(resource);
  const fields: ResourceField[] = [];
  while (reader.pos < resource.length) {
    const start = reader.pos;
    const tag = reader.uint32();
    let key: string | undefined;
    if (tag === FIELD_1_LEN) {
      const length = reader.uint32();
      key = keyOf(resource.subarray(reader.pos, reader.pos + length));
      reader.pos += length;
    } else {
      reader.skipType(tag & 7);
    }
    fields.push({ key, bytes: resource.subarray(start, reader.pos) });
  }
  return fields;
}

/**
 * Applies the actions in order to entries that may carry a key (attributes
 * do; a Resource's other fields do not, and are left where they are). A key
 * a sender repeated counts as one: delete removes every copy, and upsert or
 * update leaves the stamped value alone, so no stale copy of
 * platform.projectId survives beside the new one. New keys go last.
 */
export function applyActions<T extends { readonly key: string | undefined }>(
  entries: readonly T[],
  actions: readonly AttributeAction[],
  entry: (key: string, value: AttributeScalar) => T,
): T[] {
  let result = [...entries];
  for (const { key, value, action } of actions) {
    const at = result.findIndex((e) => e.key === key);
    if (action === 'delete') {
      if (at !== -1) result = result.filter((e) => e.key !== key);
      continue;
    }
    if (value === undefined) continue;
    if (at === -1 && action !== 'update') result.push(entry(key, value));
    else if (at !== -1 && action !== 'insert') {
      const stamped = entry(key, value);
      result = result.filter((e, i) => e.key !== key || i === at).map((e, i) => (i === at ? stamped : e));
    }
  }
  return result;
}

function attributeField(key: string, value: AttributeScalar): ResourceField {
  return { key, bytes: encodeResourceAttribute({ key, value: toAnyValue(value) }) };
}

export function createResourceProcessor(config: ResourceConfig): Processor {
  const cache = new Map<string, Uint8Array>();

  function stamp(resource: Uint8Array | undefined): Uint8Array {
    const bytes = resource ?? EMPTY;
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let stamped = cache.get(key);
    if (stamped === undefined) {
      stamped = Buffer.concat(applyActions(fieldsOf(bytes), config.actions, attributeField).map((field) => field.bytes));
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
