// The head of an answer an upstream attempt produced: who served it, after
// how many attempts and, on routes that generate, under which generation id.
// Nothing is set on the response before its writeHead: Node writes a head it
// is handed whole at once, but once setHeader has been called it sends every
// header writeHead is given through setHeader's checks again (bench/RESULTS.md,
// gateway maximum notes).
import type { ServerResponse } from 'node:http';

// No `connection`: Node writes `keep-alive` itself, and `close` while the listener stops (a reload,
// a shutdown). One given here wins over that: clients went on streaming through the old listener
// until its grace was over and their streams were cut.
const SSE_HEAD = ['content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'x-accel-buffering', 'no'];

/** What an answer's head says of its request. */
export interface AnsweredRequest {
  readonly attempts: number;
  readonly meter: { readonly generationId: string; readonly limits: Record<string, string> | undefined } | undefined;
}

/** The head as writeHead's flat list: names and values in turn. */
function answerHead(state: AnsweredRequest, slug: string): string[] {
  const head = ['x-sluice-provider', slug, 'x-sluice-attempts', String(state.attempts)];
  const meter = state.meter;
  if (meter === undefined) return head;
  head.push('x-sluice-generation-id', meter.generationId);
  if (meter.limits !== undefined) for (const name of Object.keys(meter.limits)) head.push(name, meter.limits[name] as string);
  return head;
}

/** No upstream header to pass on. */
const NO_HEAD: readonly string[] = [];

/** A whole JSON answer: the head (and `upstreamHead`, names and values in turn) and `payload`, in one write. */
export function writeJsonAnswer(res: ServerResponse, state: AnsweredRequest, slug: string, payload: string, upstreamHead = NO_HEAD): void {
  const head = answerHead(state, slug);
  if (upstreamHead.length > 0) head.push(...upstreamHead);
  head.push('content-type', 'application/json', 'content-length', String(Buffer.byteLength(payload)));
  res.writeHead(200, head);
  res.end(payload);
}

/** A stream's head (and `upstreamHead`), written before its first event. */
export function writeStreamHead(res: ServerResponse, state: AnsweredRequest, slug: string, upstreamHead = NO_HEAD): void {
  res.writeHead(200, answerHead(state, slug).concat(upstreamHead, SSE_HEAD));
}
