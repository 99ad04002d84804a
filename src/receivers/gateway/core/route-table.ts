// Finds the route for a request path: exact paths through one map lookup,
// then the few prefix routes (`/v1/models/{id}`) in order.
import type { ProtocolRoute } from './protocol.js';

const NONE: readonly ProtocolRoute[] = [];

export class RouteTable {
  readonly #exact = new Map<string, ProtocolRoute[]>();
  readonly #prefixed: ProtocolRoute[] = [];

  constructor(routes: readonly ProtocolRoute[]) {
    for (const route of routes) {
      if (route.prefix === true) {
        this.#prefixed.push(route);
        continue;
      }
      const same = this.#exact.get(route.path);
      if (same === undefined) this.#exact.set(route.path, [route]);
      else same.push(route);
    }
  }

  /** Every route on this path, whatever its method (empty: an unknown path). */
  onPath(path: string): readonly ProtocolRoute[] {
    const exact = this.#exact.get(path);
    if (exact !== undefined) return exact;
    for (const route of this.#prefixed) {
      if (path.length > route.path.length && path.startsWith(route.path)) return this.#prefixed.filter((r) => r.path === route.path);
    }
    return NONE;
  }
}

/** The route on `onPath` for `method`, if there is one. */
export function forMethod(onPath: readonly ProtocolRoute[], method: string): ProtocolRoute | undefined {
  // HEAD is GET without the body (RFC 9110 9.3.2): Node leaves the body out of a HEAD's answer.
  const wanted = method === 'HEAD' ? 'GET' : method;
  for (const route of onPath) if (route.method === wanted) return route;
  return undefined;
}
