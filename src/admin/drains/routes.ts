// The drains API (DESIGN section 6) under /v1/drains on the admin endpoint.
// Every request needs the admin key; answers are JSON; errors are
// {"error": {"message", "code", "problems"?}}.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Host } from '../../core/component.js';
import { ClusterUnavailableError, DrainLimitError, DrainNotFoundError, DrainsStoppingError, StorageWriteError } from '../../shared/errors.js';
import { hostService } from '../../core/host-services.js';
import { DRAINS_CONTROLLER, type DrainEdit, type DrainsController } from '../../exporters/drains/controller.js';
import { sendError, sendJson } from '../respond.js';
import type { AdminRoutes } from '../routes.js';
import { readJsonBody } from './body.js';
import { changesFromBody, deliveryFromBody, headersMoveProblem, patchedBody, viewOf } from './convert.js';
import type { DrainDefinition } from '../../exporters/drains/definition.js';
import { drainBodySchema, drainPatchSchema, liftInsecure, parseBody, testBodySchema, testOverDrainSchema } from './schema.js';

export const DRAINS_PREFIX = '/v1/drains';

function fail(res: ServerResponse, status: number, code: string, message: string, problems?: string[]): void {
  sendJson(res, status, { error: { message, code, ...(problems === undefined ? {} : { problems }) } });
}

function invalid(res: ServerResponse, problems: string[]): void {
  fail(res, 400, 'invalid_request', problems.join('; '), problems);
}

function methodNotAllowed(res: ServerResponse, method: string | undefined, allow: string): void {
  sendError(res, 405, 'method_not_allowed', `${method ?? ''} is not allowed here`, { allow });
}

/**
 * How the API finds the running drains exporter, per request: its controller;
 * SWAPPING while the graph is being built, reloaded or stopped (the old
 * exporter has let go and the next has not taken over: 503, try again); or
 * undefined when the running config has no drains exporter (404).
 */
export type DrainsLookup = () => DrainsController | typeof SWAPPING | undefined;
export const SWAPPING = Symbol('swapping');

/** The running drains exporter's controller, looked up on the host per request; `swapping` says the graph is between configs. */
export function drainsControllerOn(host: () => Host | undefined, swapping: () => boolean): DrainsLookup {
  return () => {
    const current = host();
    const controller = current === undefined ? undefined : hostService(current, DRAINS_CONTROLLER);
    if (controller === undefined && swapping()) return SWAPPING;
    return controller;
  };
}

const RETRY_AFTER_SECONDS = '1';

function unavailable(res: ServerResponse, message: string): void {
  sendError(res, 503, 'unavailable', message, { 'retry-after': RETRY_AFTER_SECONDS });
}

/**
 * The controller to act with, or undefined once an answer is written. A
 * change looks it up again after its body has arrived: a reload may have
 * swapped the exporter meanwhile, and the one that read the request must not
 * be the one that writes (DrainsStoppingError, answered 503, covers a swap
 * that starts later still).
 */
function controllerFor(res: ServerResponse, drains: DrainsLookup, pathname: string): DrainsController | undefined {
  const controller = drains();
  if (controller === SWAPPING) {
    unavailable(res, 'the drains API is unavailable while the config is being applied; try again');
    return undefined;
  }
  if (controller === undefined) fail(res, 404, 'not_found', `not found: ${pathname} (no drains exporter is configured)`);
  return controller;
}

export function mountDrainsApi(routes: AdminRoutes, drains: DrainsLookup): () => void {
  return routes.addRoute(DRAINS_PREFIX, async function drainsApi(req, res, url) {
    // The key first: whether drains are configured is not for callers without it.
    if (!routes.requireAdminKey(req, res)) return;
    if (controllerFor(res, drains, url.pathname) === undefined) return;
    const current = () => controllerFor(res, drains, url.pathname);
    const rest = url.pathname.slice(DRAINS_PREFIX.length).replace(/^\/+|\/+$/g, '');
    try {
      if (rest === '') return await collection(req, res, current);
      if (rest === 'test') return await testDelivery(req, res, current);
      if (rest.includes('/')) return fail(res, 404, 'not_found', `not found: ${url.pathname}`);
      const id = decodedPathPart(rest);
      if (id === undefined) return fail(res, 404, 'not_found', `not found: ${url.pathname}`);
      return await item(req, res, current, id);
    } catch (err) {
      // Shared drains need Redis to change; reads and running drains do not.
      if (err instanceof DrainNotFoundError) return fail(res, 404, 'not_found', err.message);
      if (err instanceof DrainLimitError) return fail(res, 400, 'limit_exceeded', err.message);
      if (err instanceof ClusterUnavailableError) return fail(res, 503, 'cluster_unavailable', err.message);
      if (err instanceof DrainsStoppingError) return unavailable(res, err.message);
      // The daemon's storage, not the request, is at fault: a retry can succeed once the disk has room.
      if (err instanceof StorageWriteError) return fail(res, 503, err.full ? 'storage_full' : 'storage_error', err.message);
      throw err;
    }
  });
}

/** GET and HEAD read; HEAD's answer carries the headers only (Node's server leaves the body out). */
const isRead = (method: string | undefined): boolean => method === 'GET' || method === 'HEAD';

type Current = () => DrainsController | undefined;

async function collection(req: IncomingMessage, res: ServerResponse, current: Current): Promise<void> {
  if (isRead(req.method)) {
    const drains = current();
    return drains === undefined ? undefined : sendJson(res, 200, { drains: drains.list().map(viewOf) });
  }
  if (req.method !== 'POST') return methodNotAllowed(res, req.method, 'GET, HEAD, POST');
  const body = await readDrainBody(req);
  if (!body.ok) return fail(res, body.status, 'invalid_request', body.message, [body.message]);
  const parsed = parseBody(drainBodySchema, body.value);
  if (!parsed.ok) return invalid(res, parsed.problems);
  const drains = current();
  if (drains === undefined) return;
  const created = await drains.create(changesFromBody(parsed.value));
  sendJson(res, 201, viewOf(created));
}

async function item(req: IncomingMessage, res: ServerResponse, current: Current, id: string): Promise<void> {
  if (!isRead(req.method) && req.method !== 'PATCH' && req.method !== 'DELETE') return methodNotAllowed(res, req.method, 'GET, HEAD, PATCH, DELETE');
  // A PATCH body is read before anything is looked up, so the drain is the one the running exporter has then.
  const body = req.method === 'PATCH' ? await readDrainBody(req) : undefined;
  const drains = current();
  if (drains === undefined) return;
  const state = drains.get(id);
  if (state === undefined) return fail(res, 404, 'not_found', `drain ${id} does not exist`);
  if (isRead(req.method)) return sendJson(res, 200, viewOf(state));
  if (state.definition.source === 'config') {
    return fail(res, 409, 'config_managed', `drain ${id} is managed by the config file (source: config); change it there`);
  }
  if (req.method === 'DELETE') {
    await drains.remove(id);
    res.writeHead(204);
    res.end();
    return;
  }
  if (body === undefined) return;
  if (!body.ok) return fail(res, body.status, 'invalid_request', body.message, [body.message]);
  const patch = parseBody(drainPatchSchema, body.value);
  if (!patch.ok) return invalid(res, patch.problems);
  const updated = await drains.update(id, patchEdit(body.value as Record<string, unknown>));
  if (!updated.ok) return invalid(res, updated.problems);
  sendJson(res, 200, viewOf(updated.state));
}

/**
 * A PATCH body as an edit of the drain as it is when the change runs (not
 * as it was when the request arrived): a change that ran in between keeps
 * what this one does not name.
 */
function patchEdit(patch: Record<string, unknown>): DrainEdit {
  return function applyPatch(current) {
    const merged = patchedBody(current, patch);
    if (!merged.ok) return merged;
    const parsed = parseBody(drainBodySchema, merged.body);
    if (!parsed.ok) return parsed;
    const moved = headersMoveProblem(current, patch, parsed.value.delivery.endpoint.traces);
    if (moved !== undefined) return { ok: false, problems: [moved] };
    return { ok: true, changes: changesFromBody(parsed.value) };
  };
}

async function testDelivery(req: IncomingMessage, res: ServerResponse, current: Current): Promise<void> {
  if (req.method !== 'POST') return methodNotAllowed(res, req.method, 'POST');
  const body = await readDrainBody(req);
  if (!body.ok) return fail(res, body.status, 'invalid_request', body.message, [body.message]);
  const drains = current();
  if (drains === undefined) return;
  let value = body.value;
  let caFile: string | undefined;
  let over: { definition: DrainDefinition; patch: Record<string, unknown> } | undefined;
  if (value !== null && typeof value === 'object' && 'drain' in value) {
    // A stored drain's secret, header values and CA are never sent back, so a
    // test of an edited drain names it and sends only what changed.
    const named = parseBody(testOverDrainSchema, value);
    if (!named.ok) return invalid(res, named.problems);
    const state = drains.get(named.value.drain);
    if (state === undefined) return fail(res, 404, 'not_found', `drain ${named.value.drain} does not exist`);
    const patch = { delivery: named.value.delivery };
    over = { definition: state.definition, patch };
    const merged = patchedBody(state.definition, patch);
    if (!merged.ok) return invalid(res, merged.problems);
    value = { delivery: merged.body['delivery'] };
    // A config drain's CA is a file (tls.ca_file); it holds unless the test gives a CA or removes it.
    if (!('tls' in named.value.delivery)) caFile = state.definition.delivery.caFile;
  }
  const parsed = parseBody(testBodySchema, value);
  if (!parsed.ok) return invalid(res, parsed.problems);
  const moved = over === undefined ? undefined : headersMoveProblem(over.definition, over.patch, parsed.value.delivery.endpoint.traces);
  if (moved !== undefined) return invalid(res, [moved]);
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

/** A drains API body, with a top-level `insecure` moved into `delivery` (liftInsecure). */
async function readDrainBody(req: IncomingMessage): ReturnType<typeof readJsonBody> {
  const body = await readJsonBody(req);
  return body.ok ? { ...body, value: liftInsecure(body.value) } : body;
}
