// The trace `POST /v1/drains/test` delivers: one SERVER span, freshly
// identified. Every span a drain delivers carries platform.projectId and
// platform.deploymentId (DESIGN section 5); the test trace carries test
// values in their shapes, so a destination that routes on them takes it.
import { newSpanId, newTraceId } from '../../otlp/ids.js';
import type { ExportTraceServiceRequest } from '../../otlp/model.js';
import { SpanKind } from '../../otlp/model.js';

export function sampleTrace(now: number = Date.now()): ExportTraceServiceRequest {
  const endNs = BigInt(now) * 1_000_000n;
  const startNs = endNs - 5_000_000n;
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'sluice-drain-test' } },
            { key: 'platform.projectId', value: { stringValue: 'prj_sluicedraintest' } },
            { key: 'platform.deploymentId', value: { stringValue: 'dpl_sluicedraintest' } },
            { key: 'sluice.test', value: { boolValue: true } },
          ],
        },
        scopeSpans: [
          {
            scope: { name: 'sluice' },
            spans: [
              {
                traceId: newTraceId(),
                spanId: newSpanId(),
                name: 'GET /sluice/drain-test',
                kind: SpanKind.SERVER,
                startTimeUnixNano: startNs.toString(),
                endTimeUnixNano: endNs.toString(),
                attributes: [{ key: 'url.path', value: { stringValue: '/sluice/drain-test' } }],
                status: { code: 1 },
              },
            ],
          },
        ],
      },
    ],
  };
}
