// Streams an upstream's chunks to the client as server-sent events in the
// client's protocol (the request's StreamEncoder writes each event). Nothing
// is sent until the first chunk exists, so a failure before it can still fall
// back; after it, a failure ends the stream with an in-band error event.
import type { ServerResponse } from 'node:http';
import type { RequestState } from './attempt.js';
import { attemptFailure, type AttemptOutcome } from './attempt-failure.js';
import { captureOutput, type CapturedChoice } from './capture.js';
import type { GatewayHttpError } from './http-error.js';
import type { ChatCompletionChunk, Usage } from '../providers/shared/openai-types.js';
import { recordUsage } from './span-usage.js';
import { recordCost } from './usage-cost.js';
import type { Served, UsageMeter } from '../../../usage/meter.js';
import type { Cost } from '../../../shared/money.js';
import { tokensOf } from '../../../shared/tokens.js';
import type { SpanRecord } from './spans.js';
import type { AttemptClock } from './upstream.js';

export type StreamResult = { answered: true; outcome: AttemptOutcome } | { answered: false; outcome: AttemptOutcome; error: GatewayHttpError };

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' };

class StreamObserver {
  model: string | undefined;
  id: string | undefined;
  usage: Usage | undefined;
  /** An upstream may repeat usage; the first report is the one charged. */
  charged = false;
  cost: Cost | undefined;
  readonly choices: CapturedChoice[] = [];
  readonly #capture: boolean;

  constructor(capture: boolean) {
    this.#capture = capture;
  }

  observe(chunk: ChatCompletionChunk): void {
    this.model ??= chunk.model;
    this.id ??= chunk.id;
    if (chunk.usage != null) this.usage = chunk.usage;
    for (const choice of chunk.choices) {
      let seen = this.choices[choice.index];
      if (seen === undefined) {
        seen = { content: '', toolCalls: [], finishReason: null };
        this.choices[choice.index] = seen;
      }
      if (choice.finish_reason != null) seen.finishReason = choice.finish_reason;
      if (this.#capture) collectDelta(seen, choice.delta);
    }
  }

  charge(meter: UsageMeter | undefined, served: Served, usage: Usage): void {
    this.charged = true;
    this.cost = meter?.charge(served, tokensOf(usage));
  }

  record(span: SpanRecord, capture: boolean, meter: UsageMeter | undefined): void {
    if (this.model !== undefined) span.str('gen_ai.response.model', this.model);
    if (this.id !== undefined) span.str('gen_ai.response.id', this.id);
    if (this.usage !== undefined) recordUsage(span, this.usage);
    recordCost(span, this.cost);
    const present = this.choices.filter((c) => c !== undefined);
    if (meter !== undefined) meter.finishReason = present[0]?.finishReason ?? '';
    span.strings('gen_ai.response.finish_reasons', present.map((c) => c.finishReason ?? ''));
    if (capture) span.str('gen_ai.output.messages', captureOutput(present));
  }
}

function collectDelta(seen: CapturedChoice, delta: ChatCompletionChunk['choices'][number]['delta']): void {
  if (typeof delta.content === 'string') seen.content += delta.content;
  for (const call of delta.tool_calls ?? []) {
    let target = seen.toolCalls[call.index];
    if (target === undefined) {
      target = { id: call.id ?? '', type: 'function', function: { name: call.function?.name ?? '', arguments: '' } };
      seen.toolCalls[call.index] = target;
    }
    target.function.arguments += call.function?.arguments ?? '';
  }
}

function waitForDrain(res: ServerResponse): Promise<void> {
  return new Promise(function wait(resolve) {
    function done(): void {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    }
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Events parsed from one upstream read arrive in one burst of microtasks;
 * corking until the next tick sends them in one write instead of one each.
 */
function corkedWriter(res: ServerResponse): (text: string) => boolean {
  let corked = false;
  function uncork(): void {
    corked = false;
    res.uncork();
  }
  return function write(text) {
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    return res.write(text);
  };
}

export async function pipeStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
  slug: string,
  headers: Record<string, string>,
  state: RequestState,
  span: SpanRecord,
  capture: boolean,
  clock: AttemptClock,
  served: Served,
): Promise<StreamResult> {
  const iterator = chunks[Symbol.asyncIterator]();
  const observer = new StreamObserver(capture);
  let next: IteratorResult<ChatCompletionChunk>;
  try {
    next = await iterator.next();
  } catch (err) {
    // Nothing reached the client yet: the fallback loop may try the next endpoint.
    const failure = attemptFailure(err, clock, slug);
    span.fail(failure.spanErrorType, failure.error.message);
    return { answered: false, outcome: failure.outcome, error: failure.error };
  }
  const res = state.res;
  const encoder = state.answer.openStream(state, slug);
  res.writeHead(200, { ...headers, ...SSE_HEADERS });
  state.meter?.firstByte();
  const write = corkedWriter(res);
  try {
    while (next.done !== true) {
      const chunk = next.value;
      observer.observe(chunk);
      // Charged before the chunk is encoded, so a usage chunk carries the cost.
      if (chunk.usage != null && !observer.charged) observer.charge(state.meter, served, chunk.usage);
      const text = encoder.chunk(chunk, state);
      if (text !== '' && !write(text)) await waitForDrain(res);
      if (state.client.closed) throw new Error('client_closed');
      next = await iterator.next();
    }
    res.end(encoder.end(state));
    return { answered: true, outcome: 'success' };
  } catch (err) {
    const failure = attemptFailure(err, clock, slug);
    span.fail(failure.spanErrorType, failure.error.message);
    state.server.fail(failure.spanErrorType === 'cancelled' ? 'cancelled' : 'stream_error', failure.error.message);
    if (failure.spanErrorType !== 'cancelled' && !res.destroyed) {
      res.end(encoder.error(failure.error, state));
    } else {
      res.destroy();
    }
    await iterator.return?.().catch(() => undefined);
    return { answered: true, outcome: failure.outcome };
  } finally {
    observer.record(span, capture, state.meter);
  }
}
