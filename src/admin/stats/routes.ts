// GET /v1/stats on the admin endpoint (admin key): the console's Pipeline and
// Gateway screens read it.
import type { SharedState } from '../../cluster/state.js';
import type { ValidatedConfig } from '../../config/validate.js';
import { sendError, sendJson } from '../respond.js';
import type { AdminRoutes } from '../routes.js';
import { gatewayCatalogs } from './catalog.js';
import { keyUsage } from './key-usage.js';
import type { StatsSampler } from './sampler.js';
import { buildStats } from './view.js';

export const STATS_PATH = '/v1/stats';

export interface StatsSources {
  /** The running config: the gateway's catalog and keys. */
  readonly config: () => ValidatedConfig | undefined;
  /** The usage records behind each key's requests, tokens and spend. */
  readonly state: () => SharedState | undefined;
}

export function mountStatsApi(routes: AdminRoutes, sampler: StatsSampler, sources: StatsSources): () => void {
  return routes.addRoute(STATS_PATH, async function statsApi(req, res, url) {
    if (!routes.requireAdminKey(req, res)) return;
    if (url.pathname !== STATS_PATH) return sendError(res, 404, 'not_found', `not found: ${url.pathname}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, 405, 'method_not_allowed', `${req.method ?? ''} is not allowed here`, { allow: 'GET, HEAD' });
    }
    const current = await sampler.current();
    const catalogs = gatewayCatalogs(sources.config());
    const usage = await keyUsage(catalogs, sources.state(), current.at);
    sendJson(res, 200, buildStats(current, sampler.snapshots(), { intervalMs: sampler.intervalMs, windowMs: sampler.windowMs, catalogs, keyUsage: usage }));
  });
}
