// Anthropic's documented Messages request shape, as the fake upstream checks it.
// https://docs.anthropic.com/en/api/messages
import { z } from 'zod';
import type { Seen } from '../shared/fake-upstream.js';
import { imageTypeOfBytes, zodProblems } from '../shared/fake-upstream.js';

// https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
const cacheControl = z.strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() }).optional();
// Anthropic answers 400 "text content blocks must contain non-whitespace text" (in system too).
const nonBlank = z.string().regex(/\S/, 'must contain non-whitespace text');
const textBlock = z.strictObject({ type: z.literal('text'), text: nonBlank, cache_control: cacheControl });
const imageBlock = z.strictObject({
  type: z.literal('image'),
  cache_control: cacheControl,
  source: z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('base64'), media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), data: z.base64() }),
    z.strictObject({ type: z.literal('url'), url: z.url() }),
  ]),
});
// Tool use ids: pattern ^[a-zA-Z0-9_-]+$ (https://docs.anthropic.com/en/api/messages).
const toolUseId = z.string().regex(/^[a-zA-Z0-9_-]+$/);
const toolUseBlock = z.strictObject({ type: z.literal('tool_use'), id: toolUseId, name: z.string().min(1), input: z.record(z.string(), z.unknown()) });
const toolResultBlock = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: toolUseId,
  content: z.union([z.string(), z.array(z.union([textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
// https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
const thinkingBlock = z.strictObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().min(1) });
const redactedThinkingBlock = z.strictObject({ type: z.literal('redacted_thinking'), data: z.string().min(1) });
const block = z.discriminatedUnion('type', [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/);

// https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking: `display` says whether the thinking text comes back.
export const claudeThinking = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('enabled'), budget_tokens: z.int().min(1024), display: z.enum(['summarized', 'omitted']).optional() }),
  z.strictObject({ type: z.literal('adaptive'), display: z.enum(['summarized', 'omitted']).optional() }),
  z.strictObject({ type: z.literal('disabled') }),
]);

export const messagesRequest = z.strictObject({
  model: z.string().min(1),
  max_tokens: z.int().min(1),
  messages: z.array(z.strictObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(block).min(1)]) })).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.int().min(0).optional(),
  // 400 "stop_sequences: each stop sequence must contain non-whitespace".
  stop_sequences: z.array(nonBlank).optional(),
  stream: z.boolean().optional(),
  thinking: claudeThinking.optional(),
  metadata: z.strictObject({ user_id: z.string() }).optional(),
  output_config: z.strictObject({ effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional() }).optional(),
  tools: z.array(z.strictObject({ name: toolName, description: z.string().optional(), input_schema: z.looseObject({ type: z.literal('object') }), cache_control: cacheControl })).optional(),
  tool_choice: z
    .discriminatedUnion('type', [
      z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
      z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
      z.strictObject({ type: z.literal('tool'), name: toolName, disable_parallel_tool_use: z.boolean().optional() }),
      z.strictObject({ type: z.literal('none') }),
    ])
    .optional(),
});

export type MessagesRequest = z.output<typeof messagesRequest>;

export function validateAnthropic(seen: Seen): string[] {
  const problems: string[] = [];
  if (seen.method !== 'POST' || seen.path !== '/v1/messages') problems.push(`request line ${seen.method} ${seen.path}`);
  if (seen.headers['x-api-key'] !== 'sk-ant-test') problems.push('x-api-key header missing or wrong');
  if (seen.headers['anthropic-version'] !== '2023-06-01') problems.push('anthropic-version header missing or wrong');
  if (seen.headers['content-type'] !== 'application/json') problems.push('content-type is not application/json');
  if (seen.headers['authorization'] !== undefined) problems.push('authorization header must not be sent');
  problems.push(...zodProblems(messagesRequest, seen.body, 'body'));
  if (problems.length > 0) return problems;
  const body = messagesRequest.parse(seen.body);
  if (body.thinking?.type === 'enabled' && body.thinking.budget_tokens >= body.max_tokens) problems.push('body thinking.budget_tokens: must be below max_tokens');
  const thinkingOn = body.thinking !== undefined && body.thinking.type !== 'disabled';
  if (thinkingOn && (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool')) problems.push('body tool_choice: thinking allows only auto or none');
  // https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#feature-compatibility (adaptive thinking too)
  if (thinkingOn && body.temperature !== undefined && body.temperature !== 1) problems.push('body temperature: may only be set to 1 when thinking is enabled');
  if (thinkingOn && body.top_k !== undefined) problems.push('body top_k: not compatible with thinking');
  if (thinkingOn && body.top_p !== undefined && body.top_p < 0.95) problems.push('body top_p: must be between 0.95 and 1 when thinking is enabled');
  problems.push(...thinkingModelProblems(body.model, body.thinking?.type, body.output_config?.effort, 'body'));
  const last = body.messages.at(-1);
  const lastBlock = typeof last?.content === 'string' ? { type: 'text', text: last.content } : last?.content.at(-1);
  if (last?.role === 'assistant' && lastBlock?.type === 'text' && /\s$/.test(lastBlock.text)) problems.push('body messages: final assistant content cannot end with trailing whitespace');
  if (refusesTemperatureWithTopP(body.model) && body.temperature !== undefined && body.top_p !== undefined) problems.push('body: `temperature` and `top_p` cannot both be specified for this model. Please use only one.');
  // Anthropic reads an image's type from its bytes and refuses a media_type that says otherwise.
  for (const image of imageBlocks(body)) {
    if (image.source.type !== 'base64') continue;
    const actual = imageTypeOfBytes(image.source.data);
    if (actual !== undefined && `image/${actual}` !== image.source.media_type) problems.push(`body image.source.base64: The image was specified using the ${image.source.media_type} media type, but the image appears to be a image/${actual} image`);
  }
  const breakpoints = JSON.stringify(body).split('"cache_control"').length - 1;
  if (breakpoints > 4) problems.push(`body: ${breakpoints} cache_control breakpoints, at most 4 are allowed`);
  // Every tool_use must be answered by tool_result blocks at the start of the very next (user) turn.
  body.messages.forEach((message, i) => {
    if (i > 0 && body.messages[i - 1]?.role === message.role) problems.push(`body messages.${i}: two ${message.role} turns in a row`);
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    const ids = message.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    if (ids.length === 0) return;
    // With thinking on, the assistant turn of a tool loop must replay its signed thinking first.
    const first = message.content[0]?.type;
    if (thinkingOn && i === body.messages.length - 2 && first !== 'thinking' && first !== 'redacted_thinking') {
      problems.push(`body messages.${i}: with thinking enabled, an assistant turn with tool_use must start with its thinking block`);
    }
    const next = body.messages[i + 1]?.content;
    const results = Array.isArray(next) ? next.slice(0, ids.length).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])) : [];
    if (results.join(',') !== ids.join(',')) problems.push(`body messages.${i + 1}: must start with tool_result blocks for ${ids.join(', ')}`);
  });
  return problems;
}

type ImageBlock = z.output<typeof imageBlock>;

/** The request's image blocks, in tool results too. */
function imageBlocks(body: MessagesRequest): ImageBlock[] {
  return body.messages.flatMap((message) =>
    typeof message.content === 'string'
      ? []
      : message.content.flatMap((b): ImageBlock[] => (b.type === 'image' ? [b] : b.type === 'tool_result' && Array.isArray(b.content) ? b.content.filter((c): c is ImageBlock => c.type === 'image') : [])),
  );
}

/**
 * What a model refuses of thinking and effort (on Bedrock too), per the model
 * lists of https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking,
 * .../effort and https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html:
 * Opus 4.7 and later, Claude 5 and the Mythos and Fable families take adaptive
 * thinking only (enabled is a 400, and disabled but on Opus 5 and Sonnet 5
 * at effort high or below), Opus and Sonnet 4.6 both, older models enabled only; xhigh is Opus
 * 4.7 and later's and Claude 5's.
 */
export function thinkingModelProblems(model: string, type: string | undefined, effort: string | undefined, at: string): string[] {
  const only = /claude-(?:opus-4-[7-9]|(?:opus|sonnet|haiku)-5|mythos|fable)/.test(model);
  const adaptive = only || /claude-(?:opus|sonnet)-4-6/.test(model);
  const problems: string[] = [];
  // Opus 5 and Sonnet 5 think by default, and keep disabled at effort high or below:
  // https://platform.claude.com/docs/en/about-claude/models/whats-new-opus-5; Opus 5.5, Sonnet 5.5
  // (https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5, .../sonnet-5-5/whats-new-sonnet-5-5),
  // Mythos and Fable (Fable 5.1 too) refuse it.
  const keepsDisabled = /claude-(?:opus|sonnet)-5(?![-.][1-9]\d?(?!\d))/.test(model) && effort !== 'xhigh' && effort !== 'max';
  const refusesDisabled = only && !keepsDisabled;
  if ((only && type === 'enabled') || (refusesDisabled && type === 'disabled')) problems.push(`${at}: "thinking.type.${type}" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`);
  if (!adaptive && type === 'adaptive') problems.push(`${at}: adaptive thinking is not supported on this model`);
  if (effort === 'xhigh' && !/claude-(?:opus-4-[7-9]|(?:opus|sonnet|haiku|mythos|fable)-5)/.test(model)) problems.push(`${at}: output_config.effort: "xhigh" is not supported by this model`);
  return problems;
}

/** Claude Sonnet 4.5, Haiku 4.5, Opus 4.1 and later take temperature or top_p, not both (on Bedrock too). */
export function refusesTemperatureWithTopP(model: string): boolean {
  return /claude-(?:(?:sonnet|haiku|opus)-4-[5-9]|opus-4-1)/.test(model);
}
