// GET /v1/cluster (DESIGN section 13): this instance's view of the fleet.
import type { ClusterStatus } from '../cluster/factory/cluster.js';
import { sendError, sendJson } from './respond.js';
import type { AdminRoutes } from './routes.js';

export const CLUSTER_PATH = '/v1/cluster';

export function mountClusterApi(routes: AdminRoutes, status: () => Promise<ClusterStatus> | undefined): () => void {
  return routes.addRoute(CLUSTER_PATH, async function clusterApi(req, res, url) {
    if (!routes.requireAdminKey(req, res)) return;
    if (url.pathname !== CLUSTER_PATH) return sendError(res, 404, 'not_found', `not found: ${url.pathname}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, 405, 'method_not_allowed', `${req.method ?? ''} is not allowed here`, { allow: 'GET, HEAD' });
    }
    const answer = status();
    if (answer === undefined) return sendError(res, 503, 'not_ready', 'the service is not running');
    sendJson(res, 200, await answer);
  });
}
