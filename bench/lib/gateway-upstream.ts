// The fake OpenAI-compatible upstream all three paths share. Run as a child
// process pinned to a core:
//   node dist/bench/lib/gateway-upstream.js <port>
// POST /v1/chat/completions answers a fixed chat.completion, or, when the body
// asks for `"stream":true`, an SSE stream of a few chunks and `[DONE]`. The
// body is scanned, not parsed, so the upstream costs as little as possible.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const KEEP_ALIVE_MS = 65_000;
const CREATED = 1_700_000_000;
const MODEL = 'bench-model';
const WORDS = ['Hello', ' from', ' the', ' fake', ' upstream.'];
const STREAM_MARKER = Buffer.from('"stream":true');
const USAGE_MARKER = Buffer.from('"include_usage":true');

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join('') }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: WORDS.length, total_tokens: 12 + WORDS.length },
  }),
);

function chunk(delta: Record<string, string>, finish: string | null): string {
  const body = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: MODEL, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
  return `data: ${JSON.stringify(body)}\n\n`;
}

const FIRST_EVENT = chunk({ role: 'assistant', content: '' }, null);
const WORD_EVENTS = WORDS.map((w) => chunk({ content: w }, null));
const LAST_EVENT = chunk({}, 'stop');
const USAGE_EVENT = `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: MODEL, choices: [], usage: { prompt_tokens: 12, completion_tokens: WORDS.length, total_tokens: 12 + WORDS.length } })}\n\n`;
const DONE_EVENT = 'data: [DONE]\n\n';

function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}');
    return;
  }
  if (body.indexOf(STREAM_MARKER) === -1) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': COMPLETION.length });
    res.end(COMPLETION);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // Separate writes, as a real model server flushes token by token.
  res.write(FIRST_EVENT);
  for (const event of WORD_EVENTS) res.write(event);
  res.write(LAST_EVENT);
  if (body.indexOf(USAGE_MARKER) !== -1) res.write(USAGE_EVENT);
  res.end(DONE_EVENT);
}

const [, , portArg] = process.argv;
if (portArg === undefined) throw new Error('usage: gateway-upstream <port>');

const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, function receive(req, res) {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => answer(req, res, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
});
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write('listening\n'));
process.once('SIGTERM', function stop() {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
