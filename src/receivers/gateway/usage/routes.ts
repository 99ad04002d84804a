// Usage lookups on the gateway endpoint, in the shapes @ai-sdk/gateway's
// getGenerationInfo() and getSpendReport() parse: GET /v1/generation?id= and
// GET /v1/report?start_date&end_date&group_by=. A gateway key sees its own
// records; the admin key (service.admin.api_key) sees every key's.
import { aiSdkErrors } from '../aisdk/errors.js';
import { GatewayHttpError, sendJson } from '../core/http-error.js';
import type { ProtocolRoute } from '../core/protocol.js';
import { buildReport, generationInfo, parseReportQuery, queryValue, ReportQueryError } from '../../../usage/report.js';

/** What `read` makes of the query string; a bad one is the 400 naming its parameter. */
function reportQuery<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ReportQueryError) throw new GatewayHttpError(400, err.message, { code: 'invalid_value', param: err.param });
    throw err;
  }
}

export const usageRoutes: readonly ProtocolRoute[] = [
  {
    route: '/v1/generation',
    method: 'GET',
    path: '/v1/generation',
    // The AI SDK's error types: its gateway client picks the error class by type.
    errors: aiSdkErrors,
    adminKey: true,
    handle: async function getGeneration(services, request) {
      const id = reportQuery(() => queryValue(new URLSearchParams(request.query), 'id'));
      if (id === null || id === '') throw new GatewayHttpError(400, 'Pass the generation id as ?id=gen_...', { code: 'invalid_value', param: 'id' });
      const record = await services.accountant.generations.get(id);
      // Another key's generation answers as if it did not exist.
      if (record === undefined || (!request.admin && record.key !== request.key.name)) {
        throw new GatewayHttpError(404, `No generation ${id}.`, { code: 'generation_not_found', param: 'id' });
      }
      sendJson(request.res, 200, JSON.stringify({ data: generationInfo(record) }));
    },
  },
  {
    route: '/v1/report',
    method: 'GET',
    path: '/v1/report',
    errors: aiSdkErrors,
    adminKey: true,
    handle: async function getReport(services, request) {
      const query = reportQuery(() => parseReportQuery(new URLSearchParams(request.query), request.admin ? undefined : request.key.name));
      const rollups = await services.accountant.generations.rollups(query.startDay, query.endDay);
      sendJson(request.res, 200, JSON.stringify(buildReport(rollups, query)));
    },
  },
];
