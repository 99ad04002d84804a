// The ceiling: a bare Node process that receives OTLP/HTTP requests and
// forwards the bytes unparsed to the sink; GET /metrics serves its event-loop
// delay as Sluice does. Run as a child process:
//   node dist/bench/lib/passthrough.js <listenPort> <sinkUrl>
import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import { loopDelayEndpoint } from './relay-loop-delay.js';

const [, , portArg, sinkUrl] = process.argv;
if (portArg === undefined || sinkUrl === undefined) throw new Error('usage: passthrough <port> <sinkUrl>');
const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: 16 });

const serveMetrics = loopDelayEndpoint();
const server = createServer(function forward(req, res) {
  if (serveMetrics(req, res)) return;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    request(sinkUrl, { method: 'POST', body: Buffer.concat(chunks), headers: { 'content-type': 'application/x-protobuf' }, dispatcher })
      .then(async (r) => {
        await r.body.dump();
        res.writeHead(r.statusCode, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
        res.end();
      })
      .catch(() => {
        res.writeHead(503);
        res.end();
      });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write('listening\n'));
