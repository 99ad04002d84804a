// The extension point other features use to serve under the admin endpoint.
// Routes outlive the listening socket, so a reload that moves the admin
// endpoint keeps them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Host } from '../core/component.js';
import { hostService, provideService, ServiceKey } from '../core/host-services.js';
import type { AdminGuard } from './auth.js';

export type AdminHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface AdminRoutes {
  /** Serves `prefix` and everything under `prefix/`; returns a function that unmounts it. */
  addRoute(prefix: string, handler: AdminHandler): () => void;
  /** Answers 401 and returns false unless the request has the configured admin key. */
  readonly requireAdminKey: AdminGuard;
}

export const ADMIN_ROUTES = new ServiceKey<AdminRoutes>('admin-routes');

/** The admin routes of the service that started this component, if it runs one. */
export function adminRoutesOf(host: Host): AdminRoutes | undefined {
  return hostService(host, ADMIN_ROUTES);
}

export function attachAdminRoutes(host: Host, routes: AdminRoutes): void {
  provideService(host, ADMIN_ROUTES, routes);
}
