// The language-model call options the AI SDK's gateway provider POSTs
// (LanguageModelV3CallOptions from @ai-sdk/gateway 3.x, V4 from 4.x) as one
// schema accepting both: file data as a string (URL, data: URL, bare base64)
// or tagged ({type:"data"|"url"|"reference"|"text"}), legacy and unified
// tool-result content items, V4-only assistant parts. Compiled once.
import { z } from 'zod';
import { slugList } from '../core/gateway-options.js';

const providerOptions = z.record(z.string(), z.record(z.string(), z.unknown())).optional();
/** The providerOptions of a message or part. */
export type PartOptions = z.output<typeof providerOptions>;

const taggedData = z.discriminatedUnion('type', [
  z.object({ type: z.literal('data'), data: z.string() }),
  z.object({ type: z.literal('url'), url: z.string(), originalUrl: z.string().optional() }),
  z.object({ type: z.literal('reference'), reference: z.record(z.string(), z.string()) }),
  z.object({ type: z.literal('text'), text: z.string() }),
]);
export type TaggedData = z.output<typeof taggedData>;
const fileData = z.union([z.string(), taggedData]);

const textPart = z.object({ type: z.literal('text'), text: z.string(), providerOptions });
const reasoningPart = z.object({ type: z.literal('reasoning'), text: z.string(), providerOptions });
const filePart = z.object({ type: z.literal('file'), mediaType: z.string(), data: fileData, filename: z.string().optional(), providerOptions });
const toolCallPart = z.object({ type: z.literal('tool-call'), toolCallId: z.string().min(1), toolName: z.string().min(1), input: z.unknown(), providerExecuted: z.boolean().optional(), providerOptions });

const contentItem = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('file'), data: fileData, mediaType: z.string(), filename: z.string().optional() }),
  z.object({ type: z.literal('file-data'), data: z.string(), mediaType: z.string(), filename: z.string().optional() }),
  z.object({ type: z.literal('image-data'), data: z.string(), mediaType: z.string() }),
  z.object({ type: z.literal('file-url'), url: z.string(), mediaType: z.string().optional() }),
  z.object({ type: z.literal('image-url'), url: z.string() }),
  z.object({ type: z.literal('file-id'), fileId: z.unknown() }),
  z.object({ type: z.literal('image-file-id'), fileId: z.unknown() }),
  z.object({ type: z.literal('file-reference'), reference: z.unknown() }),
  z.object({ type: z.literal('custom') }),
]);
export type ToolContentItem = z.output<typeof contentItem>;

const toolOutput = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), value: z.string() }),
  z.object({ type: z.literal('json'), value: z.unknown() }),
  z.object({ type: z.literal('error-text'), value: z.string() }),
  z.object({ type: z.literal('error-json'), value: z.unknown() }),
  z.object({ type: z.literal('execution-denied'), reason: z.string().optional() }),
  z.object({ type: z.literal('content'), value: z.array(contentItem) }),
]);
export type ToolOutput = z.output<typeof toolOutput>;

const toolResultPart = z.object({ type: z.literal('tool-result'), toolCallId: z.string().min(1), toolName: z.string(), output: toolOutput, providerOptions });
const approvalPart = z.object({ type: z.literal('tool-approval-response'), approvalId: z.string(), approved: z.boolean(), reason: z.string().optional() });
// V4 assistant parts a Chat Completions upstream cannot take back; accepted and left out.
const reasoningFilePart = z.object({ type: z.literal('reasoning-file') });
const customPart = z.object({ type: z.literal('custom') });

const message = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string(), providerOptions }),
  z.object({ role: z.literal('user'), content: z.array(z.discriminatedUnion('type', [textPart, filePart])), providerOptions }),
  z.object({
    role: z.literal('assistant'),
    content: z.array(z.discriminatedUnion('type', [textPart, filePart, reasoningPart, toolCallPart, toolResultPart, reasoningFilePart, customPart])),
    providerOptions,
  }),
  z.object({ role: z.literal('tool'), content: z.array(z.discriminatedUnion('type', [toolResultPart, approvalPart])), providerOptions }),
]);
export type PromptMessage = z.output<typeof message>;
export type UserPart = Extract<PromptMessage, { role: 'user' }>['content'][number];
export type FilePart = z.output<typeof filePart>;

const jsonSchema = z.record(z.string(), z.unknown());

const tool = z.discriminatedUnion('type', [
  z.object({ type: z.literal('function'), name: z.string().min(1), description: z.string().optional(), inputSchema: jsonSchema, strict: z.boolean().optional(), providerOptions }),
  z.object({ type: z.literal('provider'), id: z.string(), name: z.string(), args: z.unknown() }),
]);

export const aiGatewayOptionsSchema = z.looseObject({ order: slugList.optional(), only: slugList.optional(), models: slugList.optional() });

/** @ai-sdk/anthropic's efforts, which the Messages API takes as output_config.effort (xhigh and max on the models that have them; Anthropic refuses them on others). */
const anthropicEfforts = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

/** The providerOptions.anthropic keys the gateway reads; the others go to the provider as given. */
const anthropicOptionsSchema = z.looseObject({ effort: z.enum(anthropicEfforts).optional() });

/** The signed reasoning a provider returned, in the gateway's reasoning_details shape, replayed by the client. */
export const reasoningDetailsSchema = z
  .array(
    z.discriminatedUnion('type', [
      z.object({ type: z.literal('reasoning.text'), text: z.string(), signature: z.string().nullable().optional(), format: z.string().optional(), index: z.number().int().optional() }),
      z.object({ type: z.literal('reasoning.encrypted'), data: z.string().min(1), format: z.string().optional(), index: z.number().int().optional() }),
      z.object({ type: z.literal('reasoning.summary'), summary: z.string(), format: z.string().optional(), index: z.number().int().optional() }),
    ]),
  )
  .optional();

export const reasoningLevels = ['provider-default', 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

export const languageModelCallSchema = z.object({
  prompt: z.array(message).min(1),
  maxOutputTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  topK: z.number().int().positive().optional(),
  presencePenalty: z.number().min(-2).max(2).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
  seed: z.number().int().optional(),
  stopSequences: z.array(z.string()).optional(),
  responseFormat: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('text') }),
      z.object({ type: z.literal('json'), schema: jsonSchema.optional(), name: z.string().optional(), description: z.string().optional() }),
    ])
    .optional(),
  tools: z.array(tool).optional(),
  toolChoice: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('auto') }),
      z.object({ type: z.literal('none') }),
      z.object({ type: z.literal('required') }),
      z.object({ type: z.literal('tool'), toolName: z.string().min(1) }),
    ])
    .optional(),
  reasoning: z.enum(reasoningLevels).optional(),
  providerOptions: z.looseObject({ gateway: aiGatewayOptionsSchema.optional(), anthropic: anthropicOptionsSchema.optional() }).optional(),
  includeRawChunks: z.boolean().optional(),
  headers: z.record(z.string(), z.unknown()).optional(),
});

export type LanguageModelCall = z.output<typeof languageModelCallSchema>;
