// What sampling needs from the data, read without decoding whole batches:
// a resource's environment and runtime (decoded once per distinct Resource
// bytes, then cached), and the request path of the few spans that decide.
import type { AnyValue, KeyValue } from '../../otlp/model.js';
import { resourceAttributes, spanAttributes } from './attributes.js';

export interface ResourceInfo {
  readonly environment: string | undefined;
  /** `platform.runtime` = `edge`: never forwarded through a drain. */
  readonly edge: boolean;
}

const RESOURCE_CACHE_ENTRIES = 4096;
const NO_RESOURCE: ResourceInfo = { environment: undefined, edge: false };

function stringOf(value: AnyValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return value.intValue;
  if (value.doubleValue !== undefined) return String(value.doubleValue);
  if (value.boolValue !== undefined) return String(value.boolValue);
  return undefined;
}

function attribute(attributes: readonly KeyValue[] | undefined, key: string): string | undefined {
  if (attributes === undefined) return undefined;
  for (const kv of attributes) if (kv.key === key) return stringOf(kv.value);
  return undefined;
}

const RESOURCE_KEYS: ReadonlySet<string> = new Set(['deployment.environment.name', 'deployment.environment', 'platform.runtime']);
const PATH_KEYS: ReadonlySet<string> = new Set(['url.path', 'http.target', 'http.route']);

function resourceInfoFrom(found: ReadonlyMap<string, string>): ResourceInfo {
  return {
    environment: found.get('deployment.environment.name') ?? found.get('deployment.environment'),
    edge: found.get('platform.runtime') === 'edge',
  };
}

export function resourceInfoFromAttributes(attributes: readonly KeyValue[] | undefined): ResourceInfo {
  return {
    environment: attribute(attributes, 'deployment.environment.name') ?? attribute(attributes, 'deployment.environment'),
    edge: attribute(attributes, 'platform.runtime') === 'edge',
  };
}

/** Decodes each distinct Resource once; the bytes themselves are the cache key. */
export class ResourceInfoCache {
  readonly #cache = new Map<string, ResourceInfo>();

  get(bytes: Uint8Array | undefined): ResourceInfo {
    if (bytes === undefined || bytes.length === 0) return NO_RESOURCE;
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let info = this.#cache.get(key);
    if (info === undefined) {
      info = resourceInfoFrom(resourceAttributes(bytes, RESOURCE_KEYS));
      // Resources repeat (one per process); a full cache means churn, so start over.
      if (this.#cache.size >= RESOURCE_CACHE_ENTRIES) this.#cache.clear();
      this.#cache.set(key, info);
    }
    return info;
  }
}

/** `/a/b?x=1` or `https://h/a/b?x=1` -> `/a/b`. */
export function pathOfTarget(target: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    try {
      return new URL(target).pathname;
    } catch {
      return target;
    }
  }
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/** The request path of a span: `url.path`, else the path of `http.target`, else `http.route`. */
export function pathOfAttributes(attributes: readonly KeyValue[] | undefined): string | undefined {
  const urlPath = attribute(attributes, 'url.path');
  if (urlPath !== undefined) return urlPath;
  const target = attribute(attributes, 'http.target');
  if (target !== undefined) return pathOfTarget(target);
  return attribute(attributes, 'http.route');
}

export function pathOfSpan(spanContent: Uint8Array): string | undefined {
  const found = spanAttributes(spanContent, PATH_KEYS);
  const urlPath = found.get('url.path');
  if (urlPath !== undefined) return urlPath;
  const target = found.get('http.target');
  if (target !== undefined) return pathOfTarget(target);
  return found.get('http.route');
}
