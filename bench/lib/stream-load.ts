// Holds many concurrent chat streams open and times every chunk: each chunk
// carries the time the upstream wrote it (stream-upstream.ts), so the delay a
// path adds is arrival minus write, per chunk, on the machine's one clock.
import { Agent, request } from 'undici';
import type { Target } from './gateway-load.js';

const STAMP = /t=(\d+\.\d+)/g;

export interface StreamLoadOptions {
  readonly streams: number;
  /** ms over which the streams are opened, evenly. */
  readonly rampMs: number;
  /** Chunks per stream (one per 50 ms). */
  readonly chunks: number;
  /** Chunks arriving inside [fromMs, toMs) of epoch time are counted and timed. */
  readonly windowMs: () => readonly [number, number];
  readonly body: (chunks: number) => string;
}

export interface StreamLoadResult {
  /** Sorted, ms from the upstream's write to arrival, chunks inside the window. */
  readonly delaysMs: Float64Array;
  readonly chunks: number;
  readonly failedStreams: number;
}

export async function holdStreams(target: Target, options: StreamLoadOptions): Promise<StreamLoadResult> {
  const dispatcher = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const delays: number[] = [];
  let failedStreams = 0;
  const body = options.body(options.chunks);
  async function one(startAfterMs: number): Promise<void> {
    await new Promise((r) => setTimeout(r, startAfterMs));
    try {
      const r = await request(`${target.origin}${target.path}`, { method: 'POST', headers: target.headers, body, dispatcher });
      if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode}`);
      for await (const part of r.body as AsyncIterable<Buffer>) {
        const now = performance.timeOrigin + performance.now();
        const [from, to] = options.windowMs();
        if (now < from || now >= to) continue;
        for (const match of part.toString('latin1').matchAll(STAMP)) delays.push(now - Number(match[1]));
      }
    } catch {
      failedStreams++;
    }
  }
  await Promise.all(Array.from({ length: options.streams }, (_, i) => one((i * options.rampMs) / options.streams)));
  await dispatcher.close();
  const sorted = Float64Array.from(delays).sort();
  return { delaysMs: sorted, chunks: sorted.length, failedStreams };
}
