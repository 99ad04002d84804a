// The bare relays' event-loop delay, measured and served as Sluice serves its
// own (sluice_event_loop_delay_seconds at GET /metrics), so that a benchmark
// reads the baseline's loop the same way it reads Sluice's (loop-delay.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Registry } from 'prom-client';
import { registerEventLoopDelay } from '../../src/shared/event-loop-delay.js';

const METRICS_PATH = '/metrics';

/** Starts the monitor; the handler answers GET /metrics and returns true, or returns false for any other request. */
export function loopDelayEndpoint(): (req: IncomingMessage, res: ServerResponse) => boolean {
  const registry = new Registry();
  registerEventLoopDelay(registry);
  return function serveMetrics(req, res) {
    if (req.method !== 'GET' || req.url !== METRICS_PATH) return false;
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(text);
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
    return true;
  };
}
