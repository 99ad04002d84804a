// Converse responses, ConverseStream event-stream frames (encoded with
// @smithy/eventstream-codec, as Bedrock sends them) and Bedrock errors.
import type { ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { json } from '../shared/fake-upstream.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export const usage = { inputTokens: 30, outputTokens: 12, totalTokens: 42 };

export function sendConverse(res: ServerResponse, content: unknown[], stopReason = 'end_turn', extra: Record<string, unknown> = {}): void {
  json(res, 200, { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 321 }, ...extra });
}

export function sendError(res: ServerResponse, status: number, exception: string, message: string): void {
  json(res, status, { message }, { 'x-amzn-errortype': `${exception}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'req-1' });
}

/** One event frame; `p` is the padding field Bedrock adds to payloads. */
export function frame(eventType: string, payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify({ ...payload, p: 'abcdefghijkl' })),
  });
}

export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

export function textFrames(index: number, parts: readonly string[]): Uint8Array[] {
  return [...parts.map((text) => frame('contentBlockDelta', { contentBlockIndex: index, delta: { text } })), frame('contentBlockStop', { contentBlockIndex: index })];
}

export function toolFrames(index: number, toolUseId: string, name: string, inputParts: readonly string[]): Uint8Array[] {
  return [
    frame('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId, name } } }),
    ...inputParts.map((input) => frame('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input } } })),
    frame('contentBlockStop', { contentBlockIndex: index }),
  ];
}

export function endFrames(stopReason: string): Uint8Array[] {
  return [frame('messageStop', { stopReason }), frame('metadata', { usage, metrics: { latencyMs: 400 } })];
}

/**
 * Writes the frames as one byte stream in `splitEvery`-byte pieces (so frames
 * straddle writes), pausing between pieces; `cut` drops the connection instead of ending.
 */
/** `cut` drops the connection after the frames; `hold` leaves the body open. */
export async function sendFrames(res: ServerResponse, frames: readonly Uint8Array[], options: { splitEvery?: number; cut?: boolean; hold?: boolean } = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-1' });
  const bytes = Buffer.concat(frames);
  const step = options.splitEvery ?? bytes.length;
  for (let offset = 0; offset < bytes.length; offset += step) {
    res.write(bytes.subarray(offset, offset + step));
    if (options.splitEvery !== undefined) await new Promise((resolve) => setTimeout(resolve, 2));
  }
  if (options.cut === true) setTimeout(() => res.socket?.destroy(), 30);
  else if (options.hold !== true) res.end();
}
