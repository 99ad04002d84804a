// Gemini GenerateContentResponse -> OpenAI chat completion.
import type { ChatCompletion, ChatCompletionRequest, FinishReason, ImageOutput, ToolCall, Usage } from '../shared/openai-types.js';
import { UpstreamStreamError, type AttemptContext } from '../shared/types.js';
import type { GoogleProviderConfig } from './config.js';
import { asObject, completionId } from '../shared/inputs.js';
import { tokenCount } from '../../../../shared/tokens.js';
import { mintToolCallId } from '../shared/tool-call-id.js';
import { classifyGoogleError } from './errors.js';
import { candidateCountOf } from './request.js';
import type { GeminiCandidate, GeminiFinishReason, GeminiLogprobsCandidate, GeminiPart, GeminiResponse, GeminiUsageMetadata } from './wire.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

const FINISH_REASONS: Readonly<Record<Exclude<GeminiFinishReason, FailedFinish>, FinishReason>> = {
  FINISH_REASON_UNSPECIFIED: 'stop',
  STOP: 'stop',
  OTHER: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  LANGUAGE: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter',
  IMAGE_RECITATION: 'content_filter',
  IMAGE_OTHER: 'content_filter',
  NO_IMAGE: 'stop',
};

/**
 * Finishes where the model failed to answer: it could not make the tool calls
 * it meant to, its answer was malformed, or the request's history lacked a
 * thoughtSignature Gemini 3 requires. No Chat finish_reason says so.
 */
type FailedFinish = 'MALFORMED_FUNCTION_CALL' | 'UNEXPECTED_TOOL_CALL' | 'TOO_MANY_TOOL_CALLS' | 'MISSING_THOUGHT_SIGNATURE' | 'MALFORMED_RESPONSE';
const FAILED_FINISHES: ReadonlySet<string> = new Set<FailedFinish>(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS', 'MISSING_THOUGHT_SIGNATURE', 'MALFORMED_RESPONSE']);

/**
 * A turn that called functions ends with `tool_calls`, whatever Gemini says
 * (it says STOP). A failed one fails the attempt (the next endpoint may try)
 * rather than pass for an empty answer.
 */
export function mapFinishReason(candidate: { finishReason?: GeminiFinishReason | undefined; finishMessage?: string | undefined }, calledTools: boolean): FinishReason {
  const reason = candidate.finishReason ?? 'STOP';
  if (FAILED_FINISHES.has(reason)) throw new UpstreamStreamError(`google finished with ${reason}${typeof candidate.finishMessage === 'string' ? `: ${candidate.finishMessage}` : ''}`);
  const mapped = FINISH_REASONS[reason as Exclude<GeminiFinishReason, FailedFinish>] ?? 'stop';
  return calledTools && mapped === 'stop' ? 'tool_calls' : mapped;
}

/**
 * Gemini's candidatesTokenCount excludes thinking; OpenAI's completion_tokens
 * includes reasoning. A count that is not a non-negative integer is 0, as it
 * is billed (tokens.ts).
 */
export function mapUsage(usage: GeminiUsageMetadata): Usage {
  const prompt = tokenCount(usage.promptTokenCount) + tokenCount(usage.toolUsePromptTokenCount);
  const thoughts = tokenCount(usage.thoughtsTokenCount);
  const completion = tokenCount(usage.candidatesTokenCount) + thoughts;
  const mapped: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: usage.totalTokenCount === undefined ? prompt + completion : tokenCount(usage.totalTokenCount) };
  if (usage.cachedContentTokenCount !== undefined) mapped.prompt_tokens_details = { cached_tokens: tokenCount(usage.cachedContentTokenCount) };
  if (thoughts > 0) mapped.completion_tokens_details = { reasoning_tokens: thoughts };
  return mapped;
}

/** The answer's text, function calls and images (`responseModalities: ["IMAGE"]`), and the thought summaries apart as reasoning. */
export function readParts(parts: readonly GeminiPart[]): { text: string; reasoning: string; toolCalls: ToolCall[]; images: ImageOutput[] } {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  const images: ImageOutput[] = [];
  for (const part of parts) {
    // A part that is not an object, text that is not a string, a call without a name: nothing to pass on.
    if (typeof part !== 'object' || part === null) continue;
    const partText = typeof part.text === 'string' ? part.text : '';
    if (part.thought === true) {
      reasoning += partText;
      continue;
    }
    text += partText;
    if (typeof part.functionCall === 'object' && part.functionCall !== null && typeof part.functionCall.name === 'string') {
      const callId = typeof part.functionCall.id === 'string' ? part.functionCall.id : undefined;
      toolCalls.push({ id: mintToolCallId(part.thoughtSignature, callId), type: 'function', function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) } });
    }
    const inline = part.inlineData;
    if (typeof inline === 'object' && inline !== null && typeof inline.mimeType === 'string' && typeof inline.data === 'string') {
      images.push({ type: 'image_url', image_url: { url: `data:${inline.mimeType};base64,${inline.data}` } });
    }
  }
  return { text, reasoning, toolCalls, images };
}

export function parseGeminiBody(text: string): GeminiResponse {
  const parsed = asObject(JSON.parse(text));
  if (parsed === undefined) throw new UpstreamStreamError('google answered with a body that is not a JSON object');
  const error = asObject(parsed['error']);
  if (error !== undefined) {
    // A google.rpc.Status in a 200 answer or a stream event: its code is the HTTP status it stands for.
    const code = error['code'];
    const answer = typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? classifyGoogleError(code, new TextEncoder().encode(text)) : undefined;
    throw new UpstreamStreamError(typeof error['message'] === 'string' ? error['message'] : 'google error', answer?.type ?? 'api_error', answer);
  }
  return parsed as GeminiResponse;
}

export function parseGoogleResponse(body: Uint8Array, ctx: AttemptContext<GoogleProviderConfig>, request: ChatCompletionRequest): ChatCompletion {
  const response = parseGeminiBody(decoder.decode(body));
  const candidates = candidatesOf(response);
  // No candidate at all: the prompt itself was blocked (promptFeedback.blockReason), for every candidate asked for.
  const choices = candidates.length === 0
    ? Array.from({ length: candidateCountOf(request, ctx.slug) }, (_, index) => ({ index, message: { role: 'assistant' as const, content: '' }, finish_reason: 'content_filter' as const }))
    : candidates.map((candidate, position) => choiceOf(candidate, candidateIndex(candidate, position)));
  return {
    id: response.responseId ?? completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: response.modelVersion ?? ctx.model,
    choices: choices.sort((a, b) => a.index - b.index),
    usage: mapUsage(response.usageMetadata ?? {}),
  };
}

/** The response's candidates that are objects (a proxy may send anything there). */
export function candidatesOf(response: GeminiResponse): GeminiCandidate[] {
  return Array.isArray(response.candidates) ? response.candidates.filter((candidate) => typeof candidate === 'object' && candidate !== null) : [];
}

/**
 * A candidate's index (candidateCount > 1): the one it states, else its
 * place in the list (proto3 JSON leaves out an index of 0).
 */
export function candidateIndex(candidate: GeminiCandidate, position: number): number {
  const index = candidate.index;
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 ? index : position;
}

function choiceOf(candidate: GeminiCandidate, index: number): ChatCompletion['choices'][number] {
  const parts = candidate.content?.parts;
  const { text, reasoning, toolCalls, images } = readParts(Array.isArray(parts) ? parts : []);
  return {
    index,
    message: { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}), ...(reasoning !== '' ? { reasoning } : {}), ...(images.length > 0 ? { images } : {}) },
    finish_reason: mapFinishReason(candidate, toolCalls.length > 0),
    ...(candidate.logprobsResult !== undefined ? { logprobs: { content: tokenLogprobs(candidate), refusal: null } } : {}),
  };
}

/** OpenAI's `logprobs.content[]` entry: a token, its log probability and UTF-8 bytes, and its step's top tokens. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

/**
 * A candidate's logprobsResult as OpenAI's `logprobs.content`: one entry per
 * chosen token, with the top candidates of the same decoding step (the lists
 * run in step). Empty when the candidate has none.
 */
export function tokenLogprobs(candidate: GeminiCandidate): TokenLogprob[] {
  const result = candidate.logprobsResult;
  if (typeof result !== 'object' || result === null || !Array.isArray(result.chosenCandidates)) return [];
  const top = Array.isArray(result.topCandidates) ? result.topCandidates : [];
  return result.chosenCandidates.map((chosen, step) => {
    const alternatives = top[step]?.candidates;
    return { ...tokenOf(chosen), top_logprobs: Array.isArray(alternatives) ? alternatives.map(tokenOf) : [] };
  });
}

function tokenOf(candidate: GeminiLogprobsCandidate): { token: string; logprob: number; bytes: number[] } {
  const token = typeof candidate?.token === 'string' ? candidate.token : '';
  const logprob = typeof candidate?.logProbability === 'number' ? candidate.logProbability : 0;
  return { token, logprob, bytes: [...encoder.encode(token)] };
}
