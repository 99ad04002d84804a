// The drains API (DESIGN section 6) under /v1/drains on the admin endpoint.
// Every request needs the admin key; answers are JSON; errors are
// {"error": {"message", "code", "problems"?}}.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Host } from '../../core/component.js';
import { ClusterUnavailableError } from '../../shared/errors.js';
import { hostService } from '../../core/host-services.js';
import { DRAINS_CONTROLLER, type DrainsController } from '../../exporters/drains/controller.js';
import { MAX_DRAINS } from '../../exporters/drains/limits.js';
import { sendJson } from '../respond.js';
import type { AdminRoutes } from '../routes.js';
import { readJsonBody } from './body.js';
import { changesFromBody, deliveryFromBody, patchedBody, viewOf } from './convert.js';
import { drainBodySchema, drainPatchSchema, parseBody, testBodySchema, testOverDrainSchema } from './schema.js';

export const DRAINS_PREFIX = '/v1/drains';

function fail(res: ServerResponse, status: number, code: string, message: string, problems?: string[]): void {
  sendJson(res, status, { error: { message, code, ...(problems === undefined ? {} : { problems }) } });
}

function invalid(res: ServerResponse, problems: string[]): void {
  fail(res, 400, 'invalid_request', problems.join('; '), problems);
}

function methodNotAllowed(res: ServerResponse, method: string | undefined, allow: string): void {
  sendJson(res, 405, { error: { message: `${method ?? ''} is not allowed here`, code: 'method_not_allowed' } }, { allow });
}

/** Mounts the API; `drains` finds the running exporter per request (none: 404, as if unmounted). */
/** The running drains exporter's controller, looked up on the host per request. */
export function drainsControllerOn(host: () => Host | undefined): () => DrainsController | undefined {
  return () => {
    const current = host();
    return current === undefined ? undefined : hostService(current, DRAINS_CONTROLLER);
  };
}

export function mountDrainsApi(routes: AdminRoutes, drains: () => DrainsController | undefined): () => void {
  return routes.addRoute(DRAINS_PREFIX, async function drainsApi(req, res, url) {
    const controller = drains();
    if (controller === undefined) return fail(res, 404, 'not_found', `not found: ${url.pathname} (no drains exporter is configured)`);
    if (!routes.requireAdminKey(req, res)) return;
    const rest = url.pathname.slice(DRAINS_PREFIX.length).replace(/^\/+|\/+$/g, '');
    try {
      if (rest === '') return await collection(req, res, controller);
      if (rest === 'test') return await testDelivery(req, res, controller);
      if (rest.includes('/')) return fail(res, 404, 'not_found', `not found: ${url.pathname}`);
      const id = decodedPathPart(rest);
      if (id === undefined) return fail(res, 404, 'not_found', `not found: ${url.pathname}`);
      return await item(req, res, controller, id);
    } catch (err) {
      // Shared drains need Redis to change; reads and running drains do not.
      if (err instanceof ClusterUnavailableError) return fail(res, 503, 'cluster_unavailable', err.message);
      throw err;
    }
  });
}

async function collection(req: IncomingMessage, res: ServerResponse, drains: DrainsController): Promise<void> {
  if (req.method === 'GET') return sendJson(res, 200, { drains: drains.list().map(viewOf) });
  if (req.method !== 'POST') return methodNotAllowed(res, req.method, 'GET, POST');
  const body = await readJsonBody(req);
  if (!body.ok) return fail(res, body.status, 'invalid_request', body.message, [body.message]);
  const parsed = parseBody(drainBodySchema, body.value);
  if (!parsed.ok) return invalid(res, parsed.problems);
  if (drains.list().length >= MAX_DRAINS) {
    return fail(res, 400, 'limit_exceeded', `drains: at most ${MAX_DRAINS} drains may exist; delete one first`);
  }
  const created = await drains.create(changesFromBody(parsed.value));
  sendJson(res, 201, viewOf(created));
}

async function item(req: IncomingMessage, res: ServerResponse, drains: DrainsController, id: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'PATCH' && req.method !== 'DELETE') return methodNotAllowed(res, req.method, 'GET, PATCH, DELETE');
  const state = drains.get(id);
  if (state === undefined) return fail(res, 404, 'not_found', `drain ${id} does not exist`);
  if (req.method === 'GET') return sendJson(res, 200, viewOf(state));
  if (state.definition.source === 'config') {
    return fail(res, 409, 'config_managed', `drain ${id} is managed by the config file (source: config); change it there`);
  }
  if (req.method === 'DELETE') {
    await drains.remove(id);
    res.writeHead(204);
    res.end();
    return;
  }
  const body = await readJsonBody(req);
  if (!body.ok) return fail(res, body.status, 'invalid_request', body.message, [body.message]);
  const patch = parseBody(drainPatchSchema, body.value);
  if (!patch.ok) return invalid(res, patch.problems);
  const parsed = parseBody(drainBodySchema, patchedBody(state.definition, body.value as Record<string, unknown>));
  if (!parsed.ok) return invalid(res, parsed.problems);
  const updated = await drains.update(id, changesFromBody(parsed.value));
  sendJson(res, 200, viewOf(updated));
}

async function testDelivery(req: IncomingMessage, res: ServerResponse, drains: DrainsController): Promise<void> {
  if (req.method !== 'POST') return methodNotAllowed(res, req.method, 'POST');
  const body = await readJsonBody(req);
  if (!body.ok) return fail(res, body.status, 'invalid_request', body.message, [body.message]);
  let value = body.value;
  let caFile: string | undefined;
  if (value !== null && typeof value === 'object' && 'drain' in value) {
    // A stored drain's secret, header values and CA are never sent back, so a
    // test of an edited drain names it and sends only what changed.
    const over = parseBody(testOverDrainSchema, value);
    if (!over.ok) return invalid(res, over.problems);
    const state = drains.get(over.value.drain);
    if (state === undefined) return fail(res, 404, 'not_found', `drain ${over.value.drain} does not exist`);
    value = { delivery: patchedBody(state.definition, { delivery: over.value.delivery })['delivery'] };
    // A config drain's CA is a file (tls.ca_file); it holds unless the test gives a CA or removes it.
    if (!('tls' in over.value.delivery)) caFile = state.definition.delivery.caFile;
  }
  const parsed = parseBody(testBodySchema, value);
  if (!parsed.ok) return invalid(res, parsed.problems);
  const delivery = deliveryFromBody(parsed.value.delivery);
  sendJson(res, 200, await drains.testDelivery(caFile === undefined ? delivery : { ...delivery, caFile }));
}

/** A path segment percent-decoded, or undefined when its escapes are malformed (`%E0`): no drain has such an id. */
function decodedPathPart(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
