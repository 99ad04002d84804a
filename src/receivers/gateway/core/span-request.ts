// What a chat request asked for, on its CLIENT spans, with the OpenTelemetry
// GenAI semantic conventions' names and types: gen_ai.request.seed,
// gen_ai.request.choice.count (when not 1) and gen_ai.output.type (when a
// response_format is given) are conditionally required; the sampling
// settings are recommended. The client's values are recorded (a setting a
// provider does not take is still what was asked for), absent or null ones
// not at all.
import type { ChatCompletionRequest } from '../providers/shared/openai-types.js';
import type { SpanRecord } from './spans.js';

export function recordRequestSettings(span: SpanRecord, request: ChatCompletionRequest): void {
  if (typeof request.seed === 'number') span.int('gen_ai.request.seed', request.seed);
  if (typeof request.n === 'number' && request.n !== 1) span.int('gen_ai.request.choice.count', request.n);
  const format = request.response_format?.type;
  // json_object and json_schema are both the conventions' `json`: the type names the modality, not the schema.
  if (format !== undefined) span.str('gen_ai.output.type', format === 'text' ? 'text' : 'json');
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === 'number') span.int('gen_ai.request.max_tokens', maxTokens);
  // Doubles even when whole (a temperature of 1), as the conventions type them.
  if (typeof request.temperature === 'number') span.double('gen_ai.request.temperature', request.temperature);
  if (typeof request.top_p === 'number') span.double('gen_ai.request.top_p', request.top_p);
  if (typeof request.top_k === 'number') span.double('gen_ai.request.top_k', request.top_k);
  if (typeof request.frequency_penalty === 'number') span.double('gen_ai.request.frequency_penalty', request.frequency_penalty);
  if (typeof request.presence_penalty === 'number') span.double('gen_ai.request.presence_penalty', request.presence_penalty);
  const stop = request.stop;
  if (typeof stop === 'string') span.strings('gen_ai.request.stop_sequences', recordedStops([stop]));
  else if (Array.isArray(stop)) span.strings('gen_ai.request.stop_sequences', recordedStops(stop));
}

/** Stop sequences recorded, and characters of each: real ones are a few short strings. */
const STOP_SEQUENCES = 16;
const STOP_SEQUENCE_CHARS = 256;

/**
 * The first 16 stop sequences, each cut at 256 characters, as `sluice.model`
 * is: a request whose stop sequences are megabytes (Messages takes any number)
 * does not put them on every attempt's span, which every drain then carries.
 */
function recordedStops(stops: readonly string[]): string[] {
  return stops.slice(0, STOP_SEQUENCES).map((stop) => (stop.length > STOP_SEQUENCE_CHARS ? `${stop.slice(0, STOP_SEQUENCE_CHARS)}...` : stop));
}

/** A native Messages request's settings (its body as Anthropic reads it), as recordRequestSettings records a chat request's. */
export function recordMessagesSettings(span: SpanRecord, body: Record<string, unknown>): void {
  if (typeof body['max_tokens'] === 'number') span.int('gen_ai.request.max_tokens', body['max_tokens']);
  for (const [field, key] of MESSAGES_DOUBLES) {
    const value = body[field];
    if (typeof value === 'number') span.double(key, value);
  }
  const stop = body['stop_sequences'];
  if (Array.isArray(stop) && stop.every((s) => typeof s === 'string')) span.strings('gen_ai.request.stop_sequences', recordedStops(stop as string[]));
  const config = body['output_config'];
  const format = typeof config === 'object' && config !== null ? (config as Record<string, unknown>)['format'] : undefined;
  // Messages' only output format is a JSON schema.
  if (typeof format === 'object' && format !== null) span.str('gen_ai.output.type', 'json');
}

const MESSAGES_DOUBLES: ReadonlyArray<readonly [string, string]> = [
  ['temperature', 'gen_ai.request.temperature'],
  ['top_p', 'gen_ai.request.top_p'],
  ['top_k', 'gen_ai.request.top_k'],
];
