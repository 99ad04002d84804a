// GET /v1/cluster (DESIGN section 13): this instance's view of the fleet.
import type { ClusterStatus } from '../cluster/factory/cluster.js';
import { sendJson } from './respond.js';
import type { AdminRoutes } from './routes.js';

export const CLUSTER_PATH = '/v1/cluster';

export function mountClusterApi(routes: AdminRoutes, status: () => Promise<ClusterStatus> | undefined): () => void {
  return routes.addRoute(CLUSTER_PATH, async function clusterApi(req, res, url) {
    if (!routes.requireAdminKey(req, res)) return;
    if (url.pathname !== CLUSTER_PATH) return sendJson(res, 404, { error: { message: `not found: ${url.pathname}`, code: 'not_found' } });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendJson(res, 405, { error: { message: `${req.method ?? ''} is not allowed here`, code: 'method_not_allowed' } }, { allow: 'GET, HEAD' });
    }
    const answer = status();
    if (answer === undefined) return sendJson(res, 503, { error: { message: 'the service is not running', code: 'not_ready' } });
    sendJson(res, 200, await answer);
  });
}
