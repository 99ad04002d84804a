// A fake provider on port 0 for the adapter tests of all three provider types
// (anthropic, google, bedrock import it from here). Every request is checked
// by the test's validator against the provider's documented request shape; a
// deviation is answered 400 and recorded, and `problems` must stay empty.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { z } from 'zod';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../../../../../src/receivers/gateway/providers/shared/openai-types.js';
import type { AttemptContext, BaseProviderConfig, ProviderAdapter, UpstreamErrorInfo } from '../../../../../src/receivers/gateway/providers/shared/types.js';

export interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  raw: Buffer;
  body: unknown;
}

export type Handler = (seen: Seen, res: ServerResponse) => void | Promise<void>;

export interface FakeUpstream {
  readonly url: string;
  readonly requests: Seen[];
  readonly problems: string[];
  close(): Promise<void>;
}

/** `validate` returns the deviations of one request from the documented shape (empty when it conforms). */
export async function startFake(validate: (seen: Seen) => string[] | Promise<string[]>, handler: Handler): Promise<FakeUpstream> {
  const requests: Seen[] = [];
  const problems: string[] = [];
  const server: Server = createServer(function onRequest(req, res) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async function onEnd() {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const seen: Seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body };
      requests.push(seen);
      if (seen.path.startsWith('/images/')) return void handler(seen, res);
      const found = await validate(seen);
      if (found.length > 0) {
        problems.push(...found);
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ fake_upstream_rejected: found }));
        return;
      }
      void handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    problems,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Issues of a zod schema as readable lines ("messages.0.role: ..."). */
export function zodProblems(schema: z.ZodType, value: unknown, what: string): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${what} ${issue.path.join('.')}: ${issue.message}`);
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** SSE events written one by one; `cut` drops the connection instead of ending the response. */
/** `cut` drops the connection after the events; `hold` leaves the body open; `headers` join the head. */
export function sse(res: ServerResponse, events: ReadonlyArray<{ event?: string; data: unknown }>, options: { cut?: boolean; hold?: boolean; headers?: Record<string, string> } = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', ...options.headers });
  for (const e of events) res.write(`${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  // Let the written events reach the client first, then drop the connection mid-response.
  if (options.cut === true) setTimeout(() => res.socket?.destroy(), 30);
  else if (options.hold !== true) res.end();
}

/**
 * The image type base64 bytes are, by their magic numbers, as Anthropic and
 * Bedrock check them against the type a request declares; undefined for others.
 */
export function imageTypeOfBytes(base64: string): 'png' | 'jpeg' | 'gif' | 'webp' | undefined {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.subarray(0, 6).toString('latin1') === 'GIF89a' || bytes.subarray(0, 6).toString('latin1') === 'GIF87a') return 'gif';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return undefined;
}

/** A 1x1 PNG. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
/** The first bytes of a JPEG (SOI, then an APP0 "JFIF" segment): what providers read an image's type from. */
export const JPEG_BASE64 = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).toString('base64');

export function servePng(res: ServerResponse): void {
  const bytes = Buffer.from(PNG_BASE64, 'base64');
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(bytes.length) });
  res.end(bytes);
}

export function context<C extends BaseProviderConfig>(adapter: ProviderAdapter<C>, config: Record<string, unknown>, model: string, maxTokens?: number): AttemptContext<C> {
  return { slug: adapter.type, provider: adapter.configSchema.parse(config), model, maxTokens, signal: new AbortController().signal };
}

export type Outcome =
  | { ok: true; completion: ChatCompletion }
  | { ok: false; error: UpstreamErrorInfo };

/** buildRequest -> HTTP -> parseResponse or classifyError, the way the gateway core drives an adapter. */
export async function complete<C extends BaseProviderConfig>(adapter: ProviderAdapter<C>, ctx: AttemptContext<C>, body: Omit<ChatCompletionRequest, 'model'>): Promise<Outcome> {
  const chatRequest: ChatCompletionRequest = { model: 'test/model', ...body };
  const upstream = await adapter.buildRequest(chatRequest, ctx);
  const res = await request(upstream.url, { method: upstream.method, headers: upstream.headers, body: upstream.body });
  const bytes = new Uint8Array(await res.body.arrayBuffer());
  if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, completion: adapter.parseResponse(bytes, ctx, chatRequest) };
  return { ok: false, error: adapter.classifyError(res.statusCode, bytes, res.headers) };
}

/** Feeds the body to the adapter's stream mapper and collects every chunk; a failure is returned with the chunks before it. */
export async function stream<C extends BaseProviderConfig>(adapter: ProviderAdapter<C>, ctx: AttemptContext<C>, body: Omit<ChatCompletionRequest, 'model'>): Promise<{ chunks: ChatCompletionChunk[]; error: unknown; status: number }> {
  const chatRequest: ChatCompletionRequest = { model: 'test/model', ...body, stream: true };
  const upstream = await adapter.buildRequest(chatRequest, ctx);
  const res = await request(upstream.url, { method: upstream.method, headers: upstream.headers, body: upstream.body });
  const chunks: ChatCompletionChunk[] = [];
  if (res.statusCode !== 200) {
    await res.body.dump();
    return { chunks, error: undefined, status: res.statusCode };
  }
  const mapper = adapter.streamMapper(ctx, chatRequest);
  try {
    for await (const part of res.body) {
      chunks.push(...mapper.push(part as Uint8Array));
      if (mapper.finished || mapper.error !== undefined) break;
    }
  } catch (err) {
    // The connection was cut.
    return { chunks, error: err, status: res.statusCode };
  }
  if (!mapper.finished && mapper.error === undefined) chunks.push(...mapper.end());
  return { chunks, error: mapper.error, status: res.statusCode };
}

/** Text, tool calls (by index) and finish reason reassembled from chunks, as a client would. */
export function assemble(chunks: readonly ChatCompletionChunk[]): { role: string | undefined; text: string; toolCalls: Array<{ id: string; name: string; arguments: string }>; finish: string | null; usage: ChatCompletionChunk['usage'] } {
  let role: string | undefined;
  let text = '';
  let finish: string | null = null;
  let usage: ChatCompletionChunk['usage'];
  const toolCalls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const chunk of chunks) {
    if (chunk.usage != null) usage = chunk.usage;
    for (const choice of chunk.choices) {
      role ??= choice.delta.role;
      text += choice.delta.content ?? '';
      if (choice.finish_reason !== null) finish = choice.finish_reason;
      for (const call of choice.delta.tool_calls ?? []) {
        const target = (toolCalls[call.index] ??= { id: '', name: '', arguments: '' });
        if (call.id !== undefined) target.id = call.id;
        if (call.function?.name !== undefined) target.name = call.function.name;
        target.arguments += call.function?.arguments ?? '';
      }
    }
  }
  return { role, text, toolCalls, finish, usage };
}
