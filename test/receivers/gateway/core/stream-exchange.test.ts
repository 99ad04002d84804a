// StreamExchange on its own, driven as undici drives a dispatch handler, for
// what no real upstream can provoke: a protocol's pipe that fails to fail.
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { attemptFailure } from '../../../../src/receivers/gateway/core/attempt-failure.js';
import { ClientLink } from '../../../../src/receivers/gateway/core/client-link.js';
import { BrokenStreamError, StreamExchange, type StreamPipe } from '../../../../src/receivers/gateway/core/stream-exchange.js';
import { startClientSpan, startServerSpan } from '../../../../src/receivers/gateway/core/spans.js';
import { AttemptClock } from '../../../../src/receivers/gateway/core/upstream.js';

/** The parts of a ServerResponse the exchange touches, noting whether it was destroyed. */
function response(): { res: ServerResponse; destroyed: () => boolean } {
  let destroyed = false;
  const res = {
    cork() {},
    uncork() {},
    write: () => true,
    once() {},
    off() {},
    destroy() {
      destroyed = true;
    },
  };
  return { res: res as unknown as ServerResponse, destroyed: () => destroyed };
}

const controller: Dispatcher.DispatchController = { aborted: false, paused: false, reason: null, abort() {}, pause() {}, resume() {} };

const ALPHA = { slug: 'alpha', redact: (text: string) => text };

describe('StreamExchange', () => {
  it('cuts the answer and forbids a fallback when the pipe cannot even report its failure', async () => {
    const { res, destroyed } = response();
    const clock = new AttemptClock(10_000, 10_000, new ClientLink());
    const pipe: StreamPipe<string> = {
      part() {
        throw new Error('mapping failed');
      },
      end() {},
      fail() {
        throw new Error('reporting failed too');
      },
    };
    const exchange = new StreamExchange(res, clock, startClientSpan('chat m', startServerSpan('POST /v1/chat/completions', undefined)), pipe);
    exchange.onRequestStart(controller);
    exchange.onResponseStart(controller, 200, {});
    exchange.onResponseData(controller, Buffer.from('data: {}\n\n'));
    const err = await exchange.outcome.then(
      () => undefined,
      (e: unknown) => e,
    );
    clock.clear();
    expect(err).toBeInstanceOf(BrokenStreamError);
    expect(destroyed()).toBe(true);
    expect(attemptFailure(err, clock, ALPHA)).toMatchObject({ fallback: false, outcome: 'stream_error' });
  });
});

describe('attemptFailure', () => {
  it('tells a network error (it has a code) from a failure inside the gateway (it has none)', () => {
    const clock = new AttemptClock(10_000, 10_000, new ClientLink());
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(attemptFailure(refused, clock, ALPHA)).toMatchObject({ fallback: true, outcome: 'network_error', spanErrorType: 'ECONNREFUSED' });
    expect(attemptFailure(refused, clock, ALPHA).error.message).toBe('Provider alpha could not be reached (ECONNREFUSED).');
    const bug = attemptFailure(new TypeError("Cannot read properties of null (reading 'finish_reason')"), clock, ALPHA);
    expect(bug).toMatchObject({ fallback: true, outcome: 'internal_error', spanErrorType: 'TypeError' });
    // The client is told where it failed; the span also says how.
    expect(bug.error.message).toBe('The attempt on provider alpha failed in the gateway (TypeError).');
    expect(bug.spanMessage).toBe("The attempt on provider alpha failed in the gateway (TypeError). Cannot read properties of null (reading 'finish_reason')");
    clock.clear();
  });
});
