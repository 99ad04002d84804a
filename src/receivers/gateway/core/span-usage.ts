// Token usage on a CLIENT span, with the OpenTelemetry GenAI semantic
// conventions' names (semconv 1.38+): input_tokens counts every prompt token,
// cached ones included; cache reads and writes and reasoning tokens are their
// own attributes, present only when the provider reported them.
import { reportedCacheRead, reportedCacheWrite, tokensOf } from '../../../shared/tokens.js';
import type { Usage } from '../providers/shared/openai-types.js';
import type { SpanRecord } from './spans.js';

/** The counts are the ones the request is billed on (tokens.ts): an upstream's negative or non-numeric count is 0. */
export function recordUsage(span: SpanRecord, usage: Usage): void {
  const tokens = tokensOf(usage);
  span.int('gen_ai.usage.input_tokens', tokens.input).int('gen_ai.usage.output_tokens', tokens.output);
  if (reportedCacheRead(usage) !== undefined) span.int('gen_ai.usage.cache_read.input_tokens', tokens.cacheRead);
  if (reportedCacheWrite(usage) !== undefined) span.int('gen_ai.usage.cache_creation.input_tokens', tokens.cacheWrite);
  if (usage.completion_tokens_details?.reasoning_tokens !== undefined) span.int('gen_ai.usage.reasoning.output_tokens', tokens.reasoning);
}
