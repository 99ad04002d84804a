// Token usage on a CLIENT span, with the OpenTelemetry GenAI semantic
// conventions' names (semconv 1.38+): input_tokens counts every prompt token,
// cached ones included; cache reads and writes and reasoning tokens are their
// own attributes, present only when the provider reported them.
import type { Usage } from '../providers/shared/openai-types.js';
import type { SpanRecord } from './spans.js';

export function recordUsage(span: SpanRecord, usage: Usage): void {
  span.int('gen_ai.usage.input_tokens', usage.prompt_tokens).int('gen_ai.usage.output_tokens', usage.completion_tokens);
  const cacheRead = usage.prompt_tokens_details?.cached_tokens;
  const cacheWrite = usage.prompt_tokens_details?.cache_creation_tokens;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (cacheRead !== undefined) span.int('gen_ai.usage.cache_read.input_tokens', cacheRead);
  if (cacheWrite !== undefined) span.int('gen_ai.usage.cache_creation.input_tokens', cacheWrite);
  if (reasoning !== undefined) span.int('gen_ai.usage.reasoning.output_tokens', reasoning);
}
