// The floor for any Node gateway: an HTTP server that forwards each chat
// request's bytes unparsed to the upstream over a keep-alive undici pool and
// copies the answer back. No auth, validation, routing or spans; GET /metrics
// serves its event-loop delay as Sluice does. Run as a child:
//   node dist/bench/lib/gateway-passthrough.js <port> <upstreamOrigin>
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { loopDelayEndpoint } from './relay-loop-delay.js';

const KEEP_ALIVE_MS = 65_000;
const UPSTREAM_CONNECTIONS = 4_096; // at least one per open stream in the open-streams scenario

const [, , portArg, upstream] = process.argv;
if (portArg === undefined || upstream === undefined) throw new Error('usage: gateway-passthrough <port> <upstreamOrigin>');
const pool = new Pool(upstream, { connections: UPSTREAM_CONNECTIONS, keepAliveTimeout: KEEP_ALIVE_MS });

const serveMetrics = loopDelayEndpoint();
const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, function forward(req, res) {
  if (serveMetrics(req, res)) return;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    pool
      .request({ path: req.url ?? '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
      .then(async function copy(r) {
        res.writeHead(r.statusCode, { 'content-type': String(r.headers['content-type'] ?? 'application/json') });
        for await (const chunk of r.body) res.write(chunk);
        res.end();
      })
      .catch(function failed() {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
  });
});
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write('listening\n'));
process.once('SIGTERM', function stop() {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
