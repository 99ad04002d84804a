// A kept-alive upstream connection closed by the server just as the gateway
// reuses it (uvicorn's idle close racing a request): the request is sent
// again on another connection, and only then.
import { channel } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import OpenAI from 'openai';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { SpanKind } from '../../../../src/otlp/model.js';
import { ClientLink } from '../../../../src/receivers/gateway/core/client-link.js';
import { startClientSpan, startServerSpan } from '../../../../src/receivers/gateway/core/spans.js';
import { exchange } from '../../../../src/receivers/gateway/core/upstream-exchange.js';
import { AttemptClock, parseUpstreamUrl } from '../../../../src/receivers/gateway/core/upstream.js';
import { saveProxyEnv, startConnectProxy } from '../../../helpers/connect-proxy.js';
import { testTls } from '../../../helpers/tls.js';
import { API_KEY, attr, completion, openaiProvider, sendJson, startGateway, startUpstream, textStream, type Gateway, type Upstream } from '../harness.js';

let gateway: Gateway | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await upstream?.close();
  upstream = undefined;
});

type Answer = (body: Record<string, unknown>, res: ServerResponse) => void;

/**
 * An upstream that answers the first request on each connection with
 * `answer` and does `onReuse` with every later one: by default it closes
 * the connection without a byte of answer, as a server does whose idle
 * timer fired as the request came.
 */
async function setup(answer: Answer, onReuse: (req: IncomingMessage, res: ServerResponse) => void = (req) => req.socket.destroy()): Promise<OpenAI> {
  const served = new WeakMap<Socket, number>();
  upstream = await startUpstream(function perConnection(body, res, req) {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (count === 1) answer(body, res);
    else onReuse(req, res);
  });
  gateway = await startGateway({ providers: { up: openaiProvider(upstream) }, models: [{ id: 'up/m', endpoints: [{ provider: 'up', model: 'm' }] }] });
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: API_KEY, maxRetries: 0 });
}

const messages = [{ role: 'user' as const, content: 'hi' }];

function answerWith(res: ServerResponse, text: string): void {
  sendJson(res, 200, completion(text));
}

/** The APIError a request fails with. */
async function apiError(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

/** Lets the upstream connection sit idle in the gateway's pool, so the next request reuses it. */
const idle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

describe('an upstream that closes a kept-alive connection as it is reused', () => {
  it('answers a whole request from a new connection, and the attempt span counts the resend', async () => {
    const client = await setup((body, res) => answerWith(res, `answer to ${String((body['messages'] as { content: string }[])[0]?.content)}`));
    expect((await client.chat.completions.create({ model: 'up/m', messages })).choices[0]?.message.content).toBe('answer to hi');
    await idle();
    const second = await client.chat.completions.create({ model: 'up/m', messages: [{ role: 'user', content: 'again' }] });
    expect(second.choices[0]?.message.content).toBe('answer to again');
    // The first request, the one the closing connection took, and its resend.
    expect(upstream?.requests.map((r) => (r.body['messages'] as { content: string }[])[0]?.content)).toEqual(['hi', 'again', 'again']);
    const attempts = (await gateway!.spans(4)).filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts.map((s) => attr(s, 'http.request.resend_count'))).toEqual([undefined, 1]);
  });

  it('answers from a new connection when the close is a reset', async () => {
    const client = await setup(
      (_body, res) => answerWith(res, 'ok'),
      (req) => (req.socket as Socket).resetAndDestroy(),
    );
    await client.chat.completions.create({ model: 'up/m', messages });
    await idle();
    expect((await client.chat.completions.create({ model: 'up/m', messages })).choices[0]?.message.content).toBe('ok');
    expect(upstream?.requests).toHaveLength(3);
  });

  it('streams from a new connection', async () => {
    const client = await setup((_body, res) => textStream(res, ['one ', 'two']));
    for await (const _part of await client.chat.completions.create({ model: 'up/m', messages, stream: true }));
    await idle();
    const stream = await client.chat.completions.create({ model: 'up/m', messages, stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('one two');
    expect(upstream?.requests).toHaveLength(3);
  });

  it('does not send again a resend whose new connection was closed too, and fails as unreachable', async () => {
    const client = await setup((body, res) => {
      if ((body['messages'] as { content: string }[])[0]?.content === 'again') res.socket?.destroy();
      else answerWith(res, 'ok');
    });
    await client.chat.completions.create({ model: 'up/m', messages });
    await idle();
    const err = await apiError(client.chat.completions.create({ model: 'up/m', messages: [{ role: 'user', content: 'again' }] }));
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(502);
    expect(err.message).toContain('Provider up could not be reached');
    expect(upstream?.requests).toHaveLength(3);
  });
});

describe('a connection closed when nothing shows it was stale', () => {
  it('does not send again a request whose new connection was closed', async () => {
    const client = await setup((_body, res) => res.socket?.destroy());
    const err = await apiError(client.chat.completions.create({ model: 'up/m', messages }));
    expect(err.status).toBe(502);
    expect(upstream?.requests).toHaveLength(1);
  });

  it('does not send again a request whose answer had begun', async () => {
    const client = await setup(
      (_body, res) => answerWith(res, 'ok'),
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"id":');
        setTimeout(() => res.socket?.destroy(), 20);
      },
    );
    await client.chat.completions.create({ model: 'up/m', messages });
    await idle();
    const err = await apiError(client.chat.completions.create({ model: 'up/m', messages }));
    expect(err.status).toBe(502);
    expect(err.message).toContain('broke off its answer');
    expect(upstream?.requests).toHaveLength(2);
  });
});

describe('a connection through an HTTP proxy', () => {
  it('does not send again the first request on a new tunnel, whose connection carried only the CONNECT', async () => {
    const proxy = await startConnectProxy();
    const env = saveProxyEnv();
    try {
      process.env['HTTP_PROXY'] = process.env['http_proxy'] = proxy.url;
      delete process.env['NO_PROXY'];
      delete process.env['no_proxy'];
      const client = await setup((_body, res) => res.socket?.destroy());
      const err = await apiError(client.chat.completions.create({ model: 'up/m', messages }));
      expect(err.status).toBe(502);
      expect(upstream?.requests).toHaveLength(1);
      expect(proxy.targets).toHaveLength(1);
    } finally {
      env.restore();
      await proxy.close();
    }
  });
});

describe('a TLS connection', () => {
  it('sends a request again when the kept-alive connection closes under it (bytes the TLS layer read, a close_notify, are no answer)', async () => {
    const tls = testTls();
    let requests = 0;
    const served = new WeakMap<object, number>();
    const server = createHttpsServer({ cert: tls.cert, key: tls.key }, function answer(req, res) {
      requests += 1;
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count > 1) {
        res.socket?.end();
        return;
      }
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ connect: { ca: tls.ca } });
    try {
      const url = parseUpstreamUrl(`https://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`);
      const send = async () => {
        const clock = new AttemptClock(10_000, 10_000, new ClientLink());
        const span = startClientSpan('chat m', startServerSpan('POST /v1/chat/completions', undefined));
        try {
          return Buffer.from((await exchange(agent, { url: '', method: 'POST', headers: {}, body: '{}' }, url, clock, span)).body).toString();
        } finally {
          clock.clear();
        }
      };
      expect(await send()).toBe('ok');
      await idle();
      expect(await send()).toBe('ok');
      expect(requests).toBe(3);
    } finally {
      await agent.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a connection closed after part of the answer head', () => {
  it('does not send again a request whose status line had come', async () => {
    const client = await setup(
      (_body, res) => answerWith(res, 'ok'),
      (req) => {
        req.socket.write('HTTP/1.1 200 OK\r\ncontent-type: applic');
        setTimeout(() => req.socket.destroy(), 20);
      },
    );
    await client.chat.completions.create({ model: 'up/m', messages });
    await idle();
    const err = await apiError(client.chat.completions.create({ model: 'up/m', messages }));
    expect(err.status).toBe(502);
    expect(upstream?.requests).toHaveLength(2);
  });
});

describe('a resend still connecting', () => {
  it('ends its attempt as soon as the client leaves, without waiting for the connection', async () => {
    // A dispatcher that starts the first request on a kept-alive connection and
    // loses it, as undici reports that, then never gets the resend connected.
    const socket = {};
    const dispatched: Dispatcher.DispatchHandler[] = [];
    const dispatcher = {
      dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        dispatched.push(handler);
        if (dispatched.length > 1) return true;
        const request = {};
        channel('undici:client:sendHeaders').publish({ request: {}, socket });
        channel('undici:client:sendHeaders').publish({ request, socket });
        const controller = { abort() {}, pause() {}, resume() {}, paused: false, aborted: false, reason: null };
        handler.onRequestStart?.(controller, {});
        const error = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
        channel('undici:request:error').publish({ request, error });
        handler.onResponseError?.(controller, error);
        return true;
      },
    } as unknown as Dispatcher;
    const client = new ClientLink();
    const clock = new AttemptClock(60_000, 60_000, client);
    const span = startClientSpan('chat m', startServerSpan('POST /v1/chat/completions', undefined));
    const answer = exchange(dispatcher, { url: 'http://127.0.0.1:9/v1/chat/completions', method: 'POST', headers: {}, body: '{}' }, parseUpstreamUrl('http://127.0.0.1:9/v1/chat/completions'), clock, span);
    expect(dispatched).toHaveLength(2);
    client.close();
    await expect(answer).rejects.toThrow('client_closed');
    clock.clear();
  });
});
