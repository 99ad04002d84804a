// Reasoning ("extended thinking") and structured output as every translating
// adapter reads them from a Chat Completions request: one normalized form of
// `reasoning_effort` / `reasoning: {effort, max_tokens, exclude, enabled}`,
// the thinking budgets derived from it, and `reasoning_details` merged back
// into whole signed blocks for the next turn.
import type { ChatCompletionRequest, ReasoningDetail, ReasoningEffort } from './openai-types.js';
import { invalidRequest } from './inputs.js';

/** The efforts every translating adapter maps; `xhigh` and `max` (OpenAI's top levels) are `high` there, but for Claude's adaptive thinking (`requested`). */
export type Effort = 'minimal' | 'low' | 'medium' | 'high';

export type Reasoning =
  /** The client asked for no reasoning (`effort: "none"` or `enabled: false`). */
  | { readonly on: false }
  | {
      readonly on: true;
      readonly effort: Effort;
      /** The effort as the client gave it (`medium` when it gave a budget or `enabled` alone), `xhigh` and `max` kept. */
      readonly requested: Exclude<ReasoningEffort, 'none'>;
      /** An explicit budget (`reasoning.max_tokens`); otherwise derived from the effort. */
      readonly budget: number | undefined;
      /** `reasoning.exclude`: think, but leave the reasoning out of the answer. */
      readonly exclude: boolean;
    };

/** The reasoning the request asks for, or undefined when it says nothing about it. */
export function reasoningOf(request: ChatCompletionRequest): Reasoning | undefined {
  const options = request.reasoning;
  const given: ReasoningEffort | undefined = request.reasoning_effort ?? options?.effort;
  if (given === 'none' || options?.enabled === false) return { on: false };
  if (given === undefined && options?.max_tokens === undefined && options?.enabled !== true) return undefined;
  const requested = given ?? 'medium';
  const effort: Effort = requested === 'xhigh' || requested === 'max' ? 'high' : requested;
  return { on: true, effort, requested, budget: options?.max_tokens, exclude: options?.exclude === true };
}

/** The param a reasoning error names: the field the client set. */
export function reasoningParam(request: ChatCompletionRequest): string {
  if (request.reasoning?.max_tokens !== undefined) return 'reasoning.max_tokens';
  return request.reasoning_effort !== undefined ? 'reasoning_effort' : 'reasoning';
}

// Anthropic's extended thinking (also Claude on Bedrock): budget_tokens must be
// >= 1024 and below max_tokens. An effort takes a share of max_tokens, as
// OpenRouter maps it, capped at 32k (above that Anthropic asks for batches).
const MIN_THINKING_BUDGET = 1024;
const MAX_EFFORT_BUDGET = 32_000;
const EFFORT_SHARE: Readonly<Record<Effort, number>> = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8 };

/**
 * budget_tokens and max_tokens for Anthropic-style thinking. An explicit
 * budget the max_tokens left no room for raises max_tokens, unless the client
 * set max_tokens itself: then it is a 400.
 */
export function thinkingBudget(reasoning: Extract<Reasoning, { on: true }>, maxTokens: number, clientSetMax: boolean, request: ChatCompletionRequest, providerType: string): { budget: number; maxTokens: number } {
  // The thinking blocks carry the signatures the next turn needs: they are always returned.
  if (reasoning.exclude) invalidRequest('reasoning.exclude', `is not supported by provider type ${providerType}`);
  if (reasoning.budget !== undefined) {
    if (reasoning.budget < MIN_THINKING_BUDGET) invalidRequest('reasoning.max_tokens', `must be at least ${MIN_THINKING_BUDGET} for provider type ${providerType}`);
    if (reasoning.budget < maxTokens) return { budget: reasoning.budget, maxTokens };
    if (clientSetMax) invalidRequest('reasoning.max_tokens', `must be below max_tokens (${maxTokens}) for provider type ${providerType}: max_tokens counts the thinking too`);
    return { budget: reasoning.budget, maxTokens: reasoning.budget + maxTokens };
  }
  const budget = Math.max(MIN_THINKING_BUDGET, Math.min(MAX_EFFORT_BUDGET, Math.floor(maxTokens * EFFORT_SHARE[reasoning.effort])));
  if (budget >= maxTokens) invalidRequest(reasoningParam(request), `needs max_tokens above ${MIN_THINKING_BUDGET} for provider type ${providerType}`);
  return { budget, maxTokens };
}

/**
 * How a Claude model takes thinking, read from its id: Anthropic's
 * (`claude-opus-4-7`, `claude-sonnet-4-6-20260217`) and Bedrock's
 * (`anthropic.claude-opus-4-6-v1:0`, `us.anthropic.claude-mythos-preview`)
 * name a family, then a version.
 * - `budget`: `thinking: {type: "enabled", budget_tokens}` (Claude 4.5 and before);
 * - `adaptive`: `{type: "adaptive"}` with `output_config.effort`; a budget is
 *   deprecated but still taken (Claude 4.6);
 * - `adaptive-only`: `enabled` is a 400 (Claude 4.7 and later, and the Mythos
 *   and Fable families, Mythos Preview included), and so is `disabled` on most.
 * `xhigh`: the model takes that effort (Claude 4.7 and later).
 * `disabled`: the model thinks by default and takes `{type: "disabled"}` at its
 * default effort (Opus 5 and Sonnet 5); `none` goes as that. Elsewhere `none`
 * leaves thinking out, which on the other models that think by default (Opus
 * 5.5, Sonnet 5.5, Mythos, Fable), which refuse `disabled`, is adaptive thinking still.
 * An id naming no family and version (an inference profile's ARN) is `budget`.
 * https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking
 * https://platform.claude.com/docs/en/about-claude/models/whats-new-opus-5
 * https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5
 * https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html
 */
export function claudeThinkingMode(model: string): { mode: 'budget' | 'adaptive' | 'adaptive-only'; xhigh: boolean; disabled: boolean } {
  // A minor version has one or two digits: `claude-opus-4-20250514` is 4.0, its date no minor.
  const match = /claude-([a-z]+)(?:-(\d+)(?:[-.](\d{1,2})(?!\d))?)?/i.exec(model);
  if (match === null) return { mode: 'budget', xhigh: false, disabled: false };
  const [, family = '', major, minor] = match;
  const version = major === undefined ? 0 : Number(major) * 100 + Number(minor ?? 0);
  const xhigh = version >= 407;
  // Opus 5 takes `disabled` at effort high or below (its default is high); Opus 5.5 and Sonnet 5.5 refuse it.
  const disabled = version === 500 && /^(opus|sonnet)$/i.test(family);
  if (xhigh || /^(mythos|fable)$/i.test(family)) return { mode: 'adaptive-only', xhigh, disabled };
  return { mode: version >= 406 ? 'adaptive' : 'budget', xhigh, disabled };
}

/** Whether Claude `model` takes `effort` as it is: `max` where it has adaptive thinking, `xhigh` where it also has that effort; elsewhere both are `high`. */
export function claudeTakesEffort(model: string, effort: 'xhigh' | 'max'): boolean {
  const { mode, xhigh } = claudeThinkingMode(model);
  return mode !== 'budget' && (effort === 'max' || xhigh);
}

/** Claude's `thinking` (Anthropic's API, and Bedrock's additionalModelRequestFields). */
export type ClaudeThinking = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive'; display: 'summarized' } | { type: 'disabled' };

/** Claude's `thinking` for `none`: `disabled` on a model that thinks by default and takes it, else none (the model's default). */
export function claudeThinkingOff(model: string): ClaudeThinking | undefined {
  return claudeThinkingMode(model).disabled ? { type: 'disabled' } : undefined;
}

/** The efforts of Claude's `output_config.effort`. */
export type ClaudeEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/**
 * Claude's thinking fields for a request with reasoning on, and the max_tokens
 * to send. A model with adaptive thinking gets `{type: "adaptive"}` and the
 * effort (`minimal` is `low`; `xhigh` is `high` where the model has none; every
 * such model takes `max`), with `display: "summarized"`, since Claude 4.7 and
 * later leave the thinking text out unless asked. An explicit budget keeps
 * `enabled` on Claude 4.6, and is a 400 on a model with adaptive thinking only.
 */
export function claudeThinking(
  reasoning: Extract<Reasoning, { on: true }>,
  model: string,
  maxTokens: number,
  clientSetMax: boolean,
  request: ChatCompletionRequest,
  providerType: string,
): { thinking: ClaudeThinking; outputConfig?: { effort: ClaudeEffort }; maxTokens: number } {
  rejectWithThinking(request, providerType);
  const { mode, xhigh } = claudeThinkingMode(model);
  if (mode === 'budget' || (mode === 'adaptive' && reasoning.budget !== undefined)) {
    const { budget, maxTokens: max } = thinkingBudget(reasoning, maxTokens, clientSetMax, request, providerType);
    return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: max };
  }
  if (reasoning.budget !== undefined) invalidRequest('reasoning.max_tokens', `${model} takes adaptive thinking only, without a budget (provider type ${providerType}); use reasoning_effort`);
  if (reasoning.exclude) invalidRequest('reasoning.exclude', `is not supported by provider type ${providerType}`);
  const given = reasoning.requested;
  const effort: ClaudeEffort = given === 'minimal' ? 'low' : given === 'xhigh' && !xhigh ? 'high' : given;
  return { thinking: { type: 'adaptive', display: 'summarized' }, outputConfig: { effort }, maxTokens };
}

/**
 * What Claude's thinking (extended or adaptive) cannot take, on Anthropic's
 * API and on Bedrock alike: it samples at temperature 1, without top_k, with top_p
 * 0.95-1, and never forces a tool call. Refused rather than dropped, so an
 * endpoint of another type may take the request as it is.
 * https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#feature-compatibility
 * https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking
 * https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html
 */
function rejectWithThinking(request: ChatCompletionRequest, providerType: string): void {
  const why = `with reasoning for provider type ${providerType}`;
  if (request.temperature !== undefined && request.temperature !== 1) invalidRequest('temperature', `must be 1 ${why}`);
  if (request.top_k !== undefined) invalidRequest('top_k', `is not supported ${why}`);
  if (request.top_p !== undefined && request.top_p < 0.95) invalidRequest('top_p', `must be between 0.95 and 1 ${why}`);
  const choice = request.tool_choice;
  if (choice === 'required' || (typeof choice === 'object' && choice.type === 'function')) invalidRequest('tool_choice', `cannot force a tool call ${why}`);
}

/** One whole reasoning block of an assistant turn, ready to replay upstream. */
export type ReplayBlock = { kind: 'text'; text: string; signature: string } | { kind: 'encrypted'; data: string };

/**
 * The signed blocks of an assistant message's `reasoning_details`, in order.
 * Details streamed in pieces (text, then the signature, under one `index`) are
 * joined. Only details of `format` (or with no format) are kept: another
 * provider's signature cannot be verified, and a block without one cannot be
 * replayed (providers reject unsigned thinking).
 */
export function replayBlocks(details: readonly ReasoningDetail[] | undefined, format: string): ReplayBlock[] {
  if (details === undefined || details.length === 0) return [];
  const blocks: ReplayBlock[] = [];
  let open: { text: string; signature: string; index: number | undefined } | undefined;
  const close = (): void => {
    if (open !== undefined && open.signature !== '') blocks.push({ kind: 'text', text: open.text, signature: open.signature });
    open = undefined;
  };
  for (const detail of details) {
    if (detail.format !== undefined && detail.format !== format) continue;
    if (detail.type === 'reasoning.encrypted') {
      close();
      blocks.push({ kind: 'encrypted', data: detail.data });
      continue;
    }
    if (detail.type === 'reasoning.summary') continue;
    // A new index, or a detail after a signed one without an index, starts the next block.
    if (open !== undefined && (detail.index !== open.index || (detail.index === undefined && open.signature !== ''))) close();
    open ??= { text: '', signature: '', index: detail.index };
    open.text += detail.text;
    if (typeof detail.signature === 'string' && detail.signature !== '') open.signature = detail.signature;
  }
  close();
  return blocks;
}

/** The reasoning_details `format` of each provider family whose signatures the gateway replays. */
export const REASONING_FORMATS = {
  anthropic: 'anthropic-claude-v1',
  bedrock: 'amazon-bedrock-converse-v1',
  google: 'google-gemini-v1',
} as const;

/**
 * response_format json_schema on providers without a JSON-schema mode
 * (anthropic, bedrock) becomes one forced tool of this name; its input is the
 * answer. The name is reserved: a tool call of this name comes back as content.
 */
export const STRUCTURED_OUTPUT_TOOL = 'sluice_structured_output';

export interface StructuredOutputTool {
  name: typeof STRUCTURED_OUTPUT_TOOL;
  description: string;
  schema: Record<string, unknown>;
}

/** The forced tool standing in for response_format, or undefined when the request asks for none. */
export function structuredOutputTool(request: ChatCompletionRequest, providerType: string, reasoning: Reasoning | undefined): StructuredOutputTool | undefined {
  const format = request.response_format;
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') invalidRequest('response_format', `json_object is not supported by provider type ${providerType}; use json_schema`);
  if (request.tools !== undefined && request.tools.length > 0) invalidRequest('response_format', `json_schema cannot be combined with tools for provider type ${providerType}`);
  // A forced tool call is what carries the schema, and thinking refuses forced tool calls.
  if (reasoning?.on === true) invalidRequest('response_format', `json_schema cannot be combined with reasoning for provider type ${providerType}`);
  const { name, description, schema } = format.json_schema;
  return {
    name: STRUCTURED_OUTPUT_TOOL,
    // An empty description says nothing (and Converse refuses one): the tool gets the default.
    description: description !== undefined && description !== '' ? description : `Answer by calling this tool once; its input is the answer, a JSON object matching the schema \`${name}\`.`,
    schema: schema ?? { type: 'object' },
  };
}
