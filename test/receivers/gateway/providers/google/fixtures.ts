// Gemini responses and stream events in their documented shapes.
import type { ServerResponse } from 'node:http';
import { json, sse } from '../shared/fake-upstream.js';

export const usageMetadata = { promptTokenCount: 20, candidatesTokenCount: 8, totalTokenCount: 28 };

export function response(parts: unknown[], finishReason?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts }, ...(finishReason !== undefined ? { finishReason } : {}), index: 0 }],
    usageMetadata,
    modelVersion: 'gemini-test-001',
    responseId: 'resp-1',
    ...extra,
  };
}

export function sendResponse(res: ServerResponse, parts: unknown[], finishReason = 'STOP', extra: Record<string, unknown> = {}): void {
  json(res, 200, response(parts, finishReason, extra));
}

/** `streamGenerateContent?alt=sse`: `data: <GenerateContentResponse>` events, no [DONE]. */
export function sendStream(res: ServerResponse, events: unknown[], options: { cut?: boolean; hold?: boolean } = {}): void {
  sse(res, events.map((data) => ({ data })), options);
}
