// A fake model server for the open-streams benchmark: every POST
// /v1/chat/completions answers an SSE stream of `max_tokens` chunks, one
// every 50 ms, each carrying the time it was written (ms since the epoch,
// fractional) as its delta content, then `[DONE]`. Run as a child process:
//   node dist/bench/lib/stream-upstream.js <port>
import { createServer, type ServerResponse } from 'node:http';

const KEEP_ALIVE_MS = 65_000;
export const CHUNK_INTERVAL_MS = 50; // 20 chunks per second per stream
const MAX_TOKENS = /"max_tokens":(\d+)/;
const CREATED = 1_700_000_000;

function event(content: string, finish: string | null): string {
  const body = { id: 'chatcmpl-stream', object: 'chat.completion.chunk', created: CREATED, model: 'stream-model', choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: finish }] };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function stream(res: ServerResponse, chunks: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  const timer = setInterval(function tick() {
    if (res.destroyed) {
      clearInterval(timer);
      return;
    }
    res.write(event(`t=${(performance.timeOrigin + performance.now()).toFixed(3)}`, null));
    if (++sent < chunks) return;
    clearInterval(timer);
    res.write(event('', 'stop'));
    res.end('data: [DONE]\n\n');
  }, CHUNK_INTERVAL_MS);
  res.once('close', () => clearInterval(timer));
}

const [, , portArg] = process.argv;
if (portArg !== undefined) {
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, function receive(req, res) {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const chunks = Number(MAX_TOKENS.exec(Buffer.concat(parts).toString('utf8'))?.[1] ?? 1);
      stream(res, chunks);
    });
  });
  server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write('listening\n'));
  process.once('SIGTERM', function stop() {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
