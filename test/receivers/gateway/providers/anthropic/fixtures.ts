// Anthropic responses and stream events in their documented shapes.
import type { ServerResponse } from 'node:http';
import { json, sse } from '../shared/fake-upstream.js';

export function message(content: unknown[], stopReason: string, usage: Record<string, number> = { input_tokens: 12, output_tokens: 6 }): Record<string, unknown> {
  return { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-test-20250101', content, stop_reason: stopReason, stop_sequence: null, usage };
}

export function sendMessage(res: ServerResponse, content: unknown[], stopReason = 'end_turn', usage?: Record<string, number>): void {
  json(res, 200, message(content, stopReason, usage), { 'request-id': 'req_1' });
}

type Event = { event: string; data: Record<string, unknown> };

export function messageStart(inputTokens = 25): Event {
  return { event: 'message_start', data: { type: 'message_start', message: { ...message([], 'end_turn', { input_tokens: inputTokens, output_tokens: 1 }), stop_reason: null } } };
}

export function textBlock(index: number, parts: readonly string[]): Event[] {
  return [
    { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } },
    { event: 'ping', data: { type: 'ping' } },
    ...parts.map((text) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } } })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
  ];
}

export function toolBlock(index: number, id: string, name: string, jsonParts: readonly string[]): Event[] {
  return [
    { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } } },
    ...jsonParts.map((partial_json) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } } })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
  ];
}

export function messageEnd(stopReason: string, outputTokens = 15): Event[] {
  return [
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

export function sendEvents(res: ServerResponse, events: Event[], options: { cut?: boolean; headers?: Record<string, string> } = {}): void {
  sse(res, events, options);
}
