// Test helpers: the gateway started in-process through its factory with a
// collecting TracesConsumer, and fake upstreams speaking the OpenAI wire format.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { Host, TracesConsumer } from '../../../src/core/component.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import type { TraceBatch } from '../../../src/otlp/batch.js';
import type { Span } from '../../../src/otlp/model.js';
import { gatewayReceiverFactory } from '../../../src/receivers/gateway/factory.js';
import type { LazyGatewayReceiver } from '../../../src/receivers/gateway/factory.js';
import { testHost } from '../../helpers/host.js';

export const API_KEY = 'sk-test-key';
export const ADMIN_KEY = 'admin-test-key';

export interface Gateway {
  readonly baseURL: string;
  readonly port: number;
  readonly batches: TraceBatch[];
  readonly telemetry: Telemetry;
  readonly host: Host;
  close(): Promise<void>;
  /** Waits until `count` spans arrived, then returns all spans. */
  spans(count: number): Promise<Span[]>;
  resource(): Record<string, string>;
}

export interface GatewayOptions {
  readonly logger?: Logger;
  /** What the pipeline does with a batch of the gateway's spans; by default it keeps them. */
  readonly consume?: (batch: TraceBatch) => Promise<void>;
}

export async function startGateway(overrides: Record<string, unknown>, options: GatewayOptions = {}): Promise<Gateway> {
  const batches: TraceBatch[] = [];
  const next: TracesConsumer = {
    consume:
      options.consume ??
      async function collect(batch) {
        batches.push(batch);
      },
  };
  const telemetry = new Telemetry({ defaultMetrics: false });
  const logger = options.logger ?? pino({ level: 'silent' });
  const config = gatewayReceiverFactory.configSchema.parse({
    ...(gatewayReceiverFactory.createDefaultConfig() as Record<string, unknown>),
    endpoint: '127.0.0.1:0',
    api_keys: [API_KEY],
    ...overrides,
  });
  const storageDirectory = mkdtempSync(join(tmpdir(), 'sluice-gateway-'));
  const receiver = gatewayReceiverFactory.create({ id: 'gateway', logger, telemetry, storageDirectory, version: '0.0.0' }, config, next) as LazyGatewayReceiver;
  const host = testHost({ logger, telemetry, storageDirectory, adminApiKey: ADMIN_KEY });
  await receiver.start(host);
  const port = receiver.address?.port ?? 0;
  function allSpans(): Span[] {
    return batches.flatMap((b) => b.toModel().resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  }
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    batches,
    telemetry,
    host,
    close: async function close() {
      await receiver.shutdown();
      await host.state.close();
      rmSync(storageDirectory, { recursive: true, force: true });
    },
    spans: async function spans(count) {
      for (let i = 0; i < 200 && allSpans().length < count; i++) await new Promise((r) => setTimeout(r, 10));
      return allSpans();
    },
    resource: function resource() {
      const attrs = batches[0]?.toModel().resourceSpans[0]?.resource?.attributes ?? [];
      return Object.fromEntries(attrs.map((a) => [a.key, a.value?.stringValue ?? '']));
    },
  };
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** The body as it arrived. */
  text: string;
}

export interface Upstream {
  readonly url: string;
  readonly port: number;
  readonly requests: SeenRequest[];
  /** Requests whose connection closed before the response finished. */
  readonly aborted: SeenRequest[];
  close(): Promise<void>;
}

export type UpstreamHandler = (body: Record<string, unknown>, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export async function startUpstream(handler: UpstreamHandler): Promise<Upstream> {
  const requests: SeenRequest[] = [];
  const aborted: SeenRequest[] = [];
  const server: Server = createServer(function onRequest(req, res) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', function onEnd() {
      const text = Buffer.concat(chunks).toString('utf8');
      const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), text };
      requests.push(seen);
      res.on('close', () => {
        if (!res.writableFinished) aborted.push(seen);
      });
      void handler(seen.body, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    aborted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function completion(content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gpt-test-2024',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    ...extra,
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-test-2024', choices: [{ index: 0, delta, finish_reason: finish }], ...extra };
}

export const usageChunk = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-test-2024', choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } };

/** Answers with SSE: each event as `data: <json>`, then [DONE]. */
export function sendStream(res: ServerResponse, events: readonly unknown[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
  res.end('data: [DONE]\n\n');
}

export function textStream(res: ServerResponse, words: readonly string[]): void {
  sendStream(res, [chunk({ role: 'assistant', content: '' }), ...words.map((w) => chunk({ content: w })), chunk({}, 'stop'), usageChunk]);
}

export function openaiProvider(upstream: Upstream, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'openai', base_url: upstream.url, api_key: 'sk-upstream', ...extra };
}

export function attr(span: Span | undefined, key: string): unknown {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  if (value === undefined) return undefined;
  if (value.arrayValue !== undefined) return value.arrayValue.values.map((v) => v.stringValue);
  return value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
}

/**
 * A streaming upstream that writes events as fast as its socket takes them,
 * waiting for `drain` whenever the socket is full, until stopped (then
 * `last`) or until `cap` events (a gateway that does not hold it back).
 */
export class EventPump {
  written = 0;
  /** performance.now() when the socket last filled, while it stays full. */
  #blockedAt: number | undefined;
  #stopped = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly event: (index: number) => string,
    private readonly last: string,
    readonly cap: number,
  ) {
    this.#pump();
  }

  stop(): void {
    this.#stopped = true;
  }

  /** Resolves once the upstream has been held back for `ms` on end, or has written all `cap` events. */
  async heldFor(ms: number): Promise<void> {
    while (this.written < this.cap && (this.#blockedAt === undefined || performance.now() - this.#blockedAt < ms)) await new Promise((r) => setTimeout(r, 20));
  }

  #pump = (): void => {
    this.#blockedAt = undefined;
    while (!this.#stopped && this.written < this.cap) {
      const more = this.res.write(this.event(this.written));
      this.written += 1;
      if (!more) {
        this.#blockedAt = performance.now();
        this.res.once('drain', this.#pump);
        return;
      }
    }
    this.res.end(this.last);
  };
}

/** POSTs `body` and resolves with the response, paused: nothing of it is read until the caller resumes it. */
export function postUnread(url: string, headers: Record<string, string>, body: unknown): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Resumes a paused response and reads it to the end. */
export async function readRest(res: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  res.on('data', (part: Buffer) => parts.push(part));
  res.resume();
  await new Promise((r) => res.once('end', r));
  return Buffer.concat(parts).toString('utf8');
}
