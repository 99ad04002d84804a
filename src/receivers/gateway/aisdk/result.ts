// The pieces of a language-model result both answers share: the usage and
// finish reason in the nested shapes V3 and V4 clients read (flat usage or a
// string finish reason would break `ai`), and providerMetadata.gateway.
import { costToNumber } from '../../../shared/money.js';
import { tokensOf } from '../../../shared/tokens.js';
import type { UsageMeter } from '../../../usage/meter.js';
import type { GatewayRouting } from './routing.js';
import type { FinishReason, ImageOutput, ReasoningDetail, UrlCitation, Usage } from '../providers/shared/openai-types.js';

export type UnifiedFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

export interface AiSdkUsage {
  inputTokens: { total?: number; noCache?: number; cacheRead?: number; cacheWrite?: number };
  outputTokens: { total?: number; text?: number; reasoning?: number };
}

export interface AiSdkFinishReason {
  unified: UnifiedFinishReason;
  raw?: string;
}

const UNIFIED: Readonly<Record<FinishReason, UnifiedFinishReason>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
};

/** A refusal OpenAI said apart from the content (structured outputs): the AI SDK's own providers call a refusal a content filter. */
export const REFUSED: AiSdkFinishReason = { unified: 'content-filter', raw: 'refusal' };

export function finishReason(reason: FinishReason | null | undefined): AiSdkFinishReason {
  if (reason === null || reason === undefined) return { unified: 'other' };
  return { unified: UNIFIED[reason] ?? 'other', raw: reason };
}

/** The counts the request is billed on (tokens.ts): an upstream's negative or non-numeric count is 0, which `ai`'s schema takes. */
export function aiSdkUsage(usage: Usage | null | undefined): AiSdkUsage {
  if (usage === null || usage === undefined) return { inputTokens: {}, outputTokens: {} };
  const { input, output, cacheRead, cacheWrite, reasoning } = tokensOf(usage);
  return {
    inputTokens: { total: input, noCache: Math.max(0, input - cacheRead - cacheWrite), cacheRead, cacheWrite },
    outputTokens: { total: output, text: Math.max(0, output - reasoning), reasoning },
  };
}

/**
 * Signed reasoning travels on the reasoning part's providerMetadata, which the
 * AI SDK hands back as that part's providerOptions on the next step: so a
 * tool loop replays Anthropic's signed thinking and Gemini's signatures.
 */
export function reasoningMetadata(details: readonly ReasoningDetail[]): { sluice: { reasoningDetails: readonly ReasoningDetail[] } } {
  return { sluice: { reasoningDetails: details } };
}

/** providerMetadata.gateway: the routing that happened (generation id and cost join it with usage records). */
export interface GatewayMetadata {
  /** The requested model id. */
  modelId: string;
  /** Slug of the provider that answered. */
  provider: string;
  /** Upstream attempts made, the answering one included. */
  attempts: number;
  generationId?: string;
  cost?: number;
  /** Each attempt, and the provider and model that answered. */
  routing: GatewayRouting;
}

/** The usage meter's generation id and cost join the routing once the request has a meter. */
export function gatewayMetadata(state: { readonly attempts: number; readonly meter: UsageMeter | undefined }, routing: GatewayRouting): GatewayMetadata {
  const metadata: GatewayMetadata = { modelId: routing.originalModelId, provider: routing.finalProvider, attempts: state.attempts, routing };
  const meter = state.meter;
  if (meter !== undefined) {
    metadata.generationId = meter.generationId;
    metadata.cost = costToNumber(meter.cost);
  }
  return metadata;
}

/** The largest time a Date can hold, in ms either side of the epoch. */
const MAX_DATE_MS = 8.64e15;

/** The answer's time as ISO text: `created` (Unix seconds) when the upstream sent a usable one, else now. */
export function responseTimestamp(created: unknown): string {
  const ms = typeof created === 'number' ? created * 1000 : Number.NaN;
  return (Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? new Date(ms) : new Date()).toISOString();
}

export type FilePart = { type: 'file'; mediaType: string; data: string | { type: 'data'; data: string } };

const IMAGE_DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** An image the model made as a file part (none for one that is not a base64 data URL): its data tagged for V4, bare for V3. */
export function filePart(image: ImageOutput, tagged: boolean): FilePart[] {
  const match = IMAGE_DATA_URL.exec(image.image_url.url);
  const [, mediaType, data] = match ?? [];
  if (mediaType === undefined || data === undefined) return [];
  return [{ type: 'file', mediaType, data: tagged ? { type: 'data', data } : data }];
}

export type SourcePart = { type: 'source'; sourceType: 'url'; id: string; url: string; title?: string };

/** The URL citations among an answer's annotations as source parts, numbered on from `first` (ids are unique within the answer). */
export function sourceParts(annotations: unknown, first: number): SourcePart[] {
  if (!Array.isArray(annotations)) return [];
  const sources: SourcePart[] = [];
  for (const annotation of annotations as Array<Partial<UrlCitation> | null>) {
    const citation = annotation?.type === 'url_citation' ? annotation.url_citation : undefined;
    if (typeof citation?.url !== 'string') continue;
    const source: SourcePart = { type: 'source', sourceType: 'url', id: `source-${first + sources.length}`, url: citation.url };
    if (typeof citation.title === 'string') source.title = citation.title;
    sources.push(source);
  }
  return sources;
}

/** The token logprobs of an OpenAI choice (`logprobs.content`), which @ai-sdk/openai gives as providerMetadata.openai.logprobs. */
export function logprobsOf(logprobs: unknown): unknown[] | undefined {
  const content = (logprobs as { content?: unknown } | null | undefined)?.content;
  return Array.isArray(content) ? content : undefined;
}

/** providerMetadata: the gateway's, and the logprobs when the upstream gave them. */
export function answerMetadata(gateway: GatewayMetadata, logprobs: readonly unknown[] | undefined): { gateway: GatewayMetadata; openai?: { logprobs: readonly unknown[] } } {
  return logprobs === undefined ? { gateway } : { gateway, openai: { logprobs } };
}
