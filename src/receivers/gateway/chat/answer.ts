// How Chat Completions answers are written: the completion as JSON (a
// passthrough upstream's own bytes when there are some), a stream as
// `data: <chunk>` events ended by `data: [DONE]`. Stateless, so one shared
// encoder serves every request.
import type { ServerResponse } from 'node:http';
import type { RequestState } from '../core/attempt.js';
import { openaiErrors, type GatewayHttpError } from '../core/http-error.js';
import { RAW_EVENT, type ChatCompletion, type ChatCompletionChunk } from '../providers/shared/openai-types.js';
import type { CompletionAnswer, ErrorFormat, StreamEncoder } from '../core/protocol.js';
import { insertUsageCost } from '../core/usage-cost.js';
import { writeJsonAnswer } from '../core/answer-head.js';
import { zeroWrongCounts } from '../../../shared/tokens.js';

export const chatErrors: ErrorFormat = openaiErrors;

const chatStream: StreamEncoder = {
  chunk: function encodeChunk(chunk: ChatCompletionChunk, state: RequestState): string {
    if (chunk.usage !== undefined && !state.includeUsage) {
      if (chunk.choices.length === 0) return '';
      delete chunk.usage;
    } else if (chunk.usage != null && state.meter?.priced === true) {
      zeroWrongCounts(chunk.usage);
      chunk.usage.cost = state.meter.costUsd;
    } else if (chunk.usage == null || !zeroWrongCounts(chunk.usage)) {
      // Unchanged (no count the upstream got wrong): the upstream's own text, as for whole answers.
      const raw = chunk[RAW_EVENT];
      if (raw !== undefined) return `data: ${raw}\n\n`;
    }
    return `data: ${JSON.stringify(chunk)}\n\n`;
  },
  end: function encodeEnd(): string {
    return 'data: [DONE]\n\n';
  },
  // No [DONE] after the error: the stream did not complete, and clients
  // (the openai SDK among them) raise the error event as an APIError.
  error: function encodeError(error: GatewayHttpError): string {
    return openaiErrors.streamEvent(error);
  },
};

export const chatAnswer: CompletionAnswer = {
  complete: function answerCompletion(res: ServerResponse, completion: ChatCompletion, text: string | undefined, state: RequestState, slug: string): void {
    // A string body goes out in one write with the headers; a Buffer would take a writev.
    const meter = state.meter;
    // Counts an upstream got wrong go out as they were billed, so its own text no longer serves.
    const raw = completion.usage != null && zeroWrongCounts(completion.usage) ? undefined : text;
    let payload: string;
    if (meter === undefined || !meter.priced || completion.usage == null) payload = raw ?? JSON.stringify(completion);
    else if (raw !== undefined) payload = insertUsageCost(raw, meter.costUsd);
    else {
      completion.usage.cost = meter.costUsd;
      payload = JSON.stringify(completion);
    }
    writeJsonAnswer(res, state, slug, payload);
  },
  openStream: function openChatStream(): StreamEncoder {
    return chatStream;
  },
};
