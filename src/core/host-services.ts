// Services the running host offers its components (admin routes, shared
// state, a component's own API), looked up by key at start(host). A
// component asks for what it needs and never imports the layer above it;
// the collector's extensions work this way.
import type { Host } from './component.js';
import type { PortKeeper } from './listener/bound-ports.js';
import type { ListenerGroup } from './listener/group.js';
import type { ShutdownDeadline } from './shutdown-deadline.js';

export class ServiceKey<T> {
  // The phantom field keeps keys of different types apart for the compiler.
  declare readonly type: T;
  constructor(readonly name: string) {}
}

const byHost = new WeakMap<Host, Map<ServiceKey<unknown>, unknown>>();

/** Offers `value` under `key` to every component started with `host`; returns a function that withdraws it. */
export function provideService<T>(host: Host, key: ServiceKey<T>, value: T): () => void {
  let services = byHost.get(host);
  if (services === undefined) {
    services = new Map();
    byHost.set(host, services);
  }
  services.set(key, value);
  const owned = services;
  return function withdraw() {
    if (owned.get(key) === value) owned.delete(key);
  };
}

export function hostService<T>(host: Host, key: ServiceKey<T>): T | undefined {
  return byHost.get(host)?.get(key) as T | undefined;
}

/** The listeners of the running graph, stopped together at shutdown; absent for a host the service did not build (unit tests). */
export const LISTENER_GROUP = new ServiceKey<ListenerGroup>('listener-group');

/** The service's bound ports, kept across reloads (listener/bound-ports.ts); absent outside the service: each listener binds its own. */
export const BOUND_PORTS = new ServiceKey<PortKeeper>('bound-ports');

/** When the running graph must be stopped by; exporters bound their final flush by it. Absent outside the service (unit tests). */
export const SHUTDOWN_DEADLINE = new ServiceKey<ShutdownDeadline>('shutdown-deadline');
