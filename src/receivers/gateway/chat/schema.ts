// The Chat Completions request schema, compiled once at module load. Values
// out of range are rejected (400), never clamped. Unknown top-level fields
// pass through to OpenAI-compatible upstreams; unknown nested keys are dropped.
import { z } from 'zod';
import { gatewayOptionsSchema, slugList } from '../core/gateway-options.js';
import type { ChatCompletionRequest } from '../providers/shared/openai-types.js';
import { isBase64 } from '../providers/shared/inputs.js';

const DATA_URL_HEAD = /^data:(image\/[A-Za-z0-9.+-]+);base64,/;
export const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function isImageUrl(url: string): boolean {
  if (url.startsWith('data:')) {
    const head = DATA_URL_HEAD.exec(url);
    if (head === null) return false;
    return isBase64(url.slice(head[0].length));
  }
  if (!url.startsWith('http://') && !url.startsWith('https://')) return false;
  return URL.canParse(url);
}

const cacheControl = z.object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });
const textPart = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl.optional() });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({
    url: z.string().refine(isImageUrl, 'must be an http(s) URL or a data:image/<type>;base64,<data> URL with valid base64'),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
  cache_control: cacheControl.optional(),
});
// Audio and file inputs are kept as sent (unknown keys included) for OpenAI-compatible upstreams.
const inputAudioPart = z.object({ type: z.literal('input_audio'), input_audio: z.looseObject({ data: z.string(), format: z.string() }), cache_control: cacheControl.optional() });
const filePart = z.object({
  type: z.literal('file'),
  file: z.looseObject({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
  cache_control: cacheControl.optional(),
});
const userPart = z.discriminatedUnion('type', [textPart, imagePart, inputAudioPart, filePart]);
const textContent = z.union([z.string(), z.array(textPart)]);
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });
const assistantPart = z.discriminatedUnion('type', [textPart, refusalPart]);

const toolCall = z.discriminatedUnion('type', [
  z.object({ id: z.string().min(1), type: z.literal('function'), function: z.object({ name: z.string().min(1), arguments: z.string() }) }),
  z.object({ id: z.string().min(1), type: z.literal('custom'), custom: z.object({ name: z.string().min(1), input: z.string() }) }),
]);

const reasoningDetail = z.discriminatedUnion('type', [
  z.object({ type: z.literal('reasoning.text'), text: z.string(), signature: z.string().nullable().optional(), format: z.string().optional(), index: z.number().int().optional() }),
  z.object({ type: z.literal('reasoning.encrypted'), data: z.string().min(1), format: z.string().optional(), index: z.number().int().optional() }),
  // Summaries (OpenAI's reasoning models via OpenRouter) carry nothing to replay.
  z.object({ type: z.literal('reasoning.summary'), summary: z.string(), format: z.string().optional(), index: z.number().int().optional() }),
]);

const systemMessage = z.object({ role: z.literal('system'), content: textContent, name: z.string().optional() });
const developerMessage = z.object({ role: z.literal('developer'), content: textContent, name: z.string().optional() });
const userMessage = z.object({ role: z.literal('user'), content: z.union([z.string(), z.array(userPart)]), name: z.string().optional() });
const assistantMessage = z
  .object({
    role: z.literal('assistant'),
    content: z.union([z.string(), z.array(assistantPart)]).nullable().optional(),
    name: z.string().optional(),
    tool_calls: z.array(toolCall).min(1).optional(),
    refusal: z.string().nullable().optional(),
    // Legacy function calling (with `functions`).
    function_call: z.object({ name: z.string().min(1), arguments: z.string() }).nullable().optional(),
    // A previous audio answer, replayed by id.
    audio: z.object({ id: z.string().min(1) }).nullable().optional(),
    reasoning: z.string().nullable().optional(),
    // What OpenAI-compatible servers take back on an assistant turn, for `openai`-type upstreams only:
    // DeepSeek's and Kimi's thinking text (required back after a tool call; refused with a 400 without it)
    // and DeepSeek's and Mistral's prefix completion flag.
    reasoning_content: z.string().nullable().optional(),
    prefix: z.boolean().optional(),
    reasoning_details: z
      .array(reasoningDetail)
      .optional()
      .transform((details) => details?.filter((d) => d.type !== 'reasoning.summary')),
  })
  .refine((m) => (m.content !== undefined && m.content !== null) || m.tool_calls !== undefined || m.function_call != null || m.audio != null, {
    message: 'an assistant message needs content, tool_calls, function_call or audio',
    path: ['content'],
  });
const toolMessage = z.object({ role: z.literal('tool'), content: textContent, tool_call_id: z.string().min(1) });

const functionMessage = z.object({ role: z.literal('function'), name: z.string().min(1), content: z.string().nullable() });

const message = z.discriminatedUnion('role', [systemMessage, developerMessage, userMessage, assistantMessage, toolMessage, functionMessage]);

const jsonSchemaObject = z
  .record(z.string(), z.unknown())
  .refine((s) => s['type'] === undefined || s['type'] === 'object', { message: 'must be a JSON Schema of type "object"', path: ['type'] })
  .refine((s) => s['properties'] === undefined || isRecord(s['properties']), { message: 'must be an object', path: ['properties'] })
  .refine((s) => s['required'] === undefined || (Array.isArray(s['required']) && s['required'].every((r) => typeof r === 'string')), {
    message: 'must be an array of strings',
    path: ['required'],
  });

const toolName = z.string().regex(FUNCTION_NAME, 'must be 1 to 64 letters, digits, underscores or dashes');

const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: toolName,
    description: z.string().optional(),
    parameters: jsonSchemaObject.optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

// A tool whose input is free text, or text in a grammar (OpenAI's custom tools).
const customTool = z.object({
  type: z.literal('custom'),
  custom: z.object({
    name: toolName,
    description: z.string().optional(),
    format: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('text') }),
        z.object({ type: z.literal('grammar'), grammar: z.object({ definition: z.string().min(1), syntax: z.enum(['lark', 'regex']) }) }),
      ])
      .optional(),
  }),
});

const tool = z.discriminatedUnion('type', [functionTool, customTool]);

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
  z.object({ type: z.literal('custom'), custom: z.object({ name: z.string().min(1) }) }),
  z.object({
    type: z.literal('allowed_tools'),
    allowed_tools: z.object({ mode: z.enum(['auto', 'required']), tools: z.array(z.looseObject({ type: z.string() })).min(1) }),
  }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({
      name: z.string().regex(FUNCTION_NAME, 'must be 1 to 64 letters, digits, underscores or dashes'),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

const reasoningEffort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
const reasoningOptions = z.object({
  effort: reasoningEffort.optional(),
  max_tokens: z.number().int().positive().optional(),
  exclude: z.boolean().optional(),
  enabled: z.boolean().optional(),
});


const nonNegInt = z.number().int().nonnegative();

export const chatRequestSchema = z
  .looseObject({
    model: z.string().min(1),
    messages: z.array(message).min(1),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).nullable().optional(),
    tools: z.array(tool).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: z.number().int().positive().nullable().optional(),
    max_completion_tokens: z.number().int().positive().nullable().optional(),
    stop: z.union([z.string(), z.array(z.string()).min(1).max(4)]).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    n: z.number().int().min(1).max(128).nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullable().optional(),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: nonNegInt.max(20).nullable().optional(),
    response_format: responseFormat.optional(),
    reasoning_effort: reasoningEffort.nullable().optional(),
    reasoning: reasoningOptions.nullable().optional(),
    user: z.string().optional(),
    providerOptions: z.looseObject({ gateway: gatewayOptionsSchema.optional() }).optional(),
    // What @ai-sdk/openai-compatible sends: providerOptions.<name> is spread
    // into the body, so `{ sluice: { gateway } }` arrives as `gateway`, and a
    // provider named `gateway` sends order/only/models at the top level.
    gateway: gatewayOptionsSchema.optional(),
    order: slugList.optional(),
    only: slugList.optional(),
    models: slugList.optional(),
  })
  .superRefine(function crossFieldChecks(request, ctx) {
    if (request.stream_options != null && request.stream !== true) {
      ctx.addIssue({ code: 'custom', path: ['stream_options'], message: "stream_options is only allowed when 'stream' is true" });
    }
    const choice = request.tool_choice;
    if (choice !== undefined && choice !== 'none' && (request.tools === undefined || request.tools.length === 0)) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: 'tool_choice is only allowed when tools are given' });
    }
    if (typeof choice === 'object' && choice.type === 'function' && request.tools?.some((t) => t.type === 'function' && t.function.name === choice.function.name) !== true) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice', 'function', 'name'], message: `no function tool named ${choice.function.name} in tools` });
    }
    if (typeof choice === 'object' && choice.type === 'custom' && request.tools?.some((t) => t.type === 'custom' && t.custom.name === choice.custom.name) !== true) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice', 'custom', 'name'], message: `no custom tool named ${choice.custom.name} in tools` });
    }
    if (request.reasoning_effort != null && request.reasoning?.effort !== undefined && request.reasoning.effort !== request.reasoning_effort) {
      ctx.addIssue({ code: 'custom', path: ['reasoning', 'effort'], message: 'differs from reasoning_effort; set one of them' });
    }
    if (request.top_logprobs != null && request.logprobs !== true) {
      ctx.addIssue({ code: 'custom', path: ['top_logprobs'], message: 'top_logprobs requires logprobs: true' });
    }
  });

export type ValidatedRequest = ChatCompletionRequest & {
  gateway?: { order?: string[]; only?: string[]; models?: string[] };
  order?: string[];
  only?: string[];
  models?: string[];
};

function isRecord(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
