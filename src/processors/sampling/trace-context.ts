// What sampling needs from the data, read without decoding whole batches:
// a resource's environment and runtime (read once per distinct Resource
// bytes, then cached), and the request path of the few spans that decide.
import { resourceAttributes, spanAttributes } from './attributes.js';

export interface ResourceInfo {
  readonly environment: string | undefined;
  /** `platform.runtime` = `edge`: never forwarded through a drain. */
  readonly edge: boolean;
}

const RESOURCE_CACHE_ENTRIES = 4096;
const NO_RESOURCE: ResourceInfo = { environment: undefined, edge: false };
const RESOURCE_KEYS: ReadonlySet<string> = new Set(['deployment.environment.name', 'deployment.environment', 'platform.runtime']);
const PATH_KEYS: ReadonlySet<string> = new Set(['url.path', 'http.target', 'http.route']);

/** Reads each distinct Resource once; the bytes themselves are the cache key. */
export class ResourceInfoCache {
  readonly #cache = new Map<string, ResourceInfo>();

  get(bytes: Uint8Array | undefined): ResourceInfo {
    if (bytes === undefined || bytes.length === 0) return NO_RESOURCE;
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let info = this.#cache.get(key);
    if (info === undefined) {
      const found = resourceAttributes(bytes, RESOURCE_KEYS);
      info = {
        environment: found.get('deployment.environment.name') ?? found.get('deployment.environment'),
        edge: found.get('platform.runtime') === 'edge',
      };
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

/** The request path of an encoded span: `url.path`, else the path of `http.target`, else `http.route`. */
export function pathOfSpan(spanContent: Uint8Array): string | undefined {
  const found = spanAttributes(spanContent, PATH_KEYS);
  const urlPath = found.get('url.path');
  if (urlPath !== undefined) return urlPath;
  const target = found.get('http.target');
  if (target !== undefined) return pathOfTarget(target);
  return found.get('http.route');
}
