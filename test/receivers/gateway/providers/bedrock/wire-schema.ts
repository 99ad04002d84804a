// Bedrock's documented Converse request shape and SigV4 signing, as the fake checks them.
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { z } from 'zod';
import { imageTypeOfBytes, zodProblems, type Seen } from '../shared/fake-upstream.js';
import { claudeThinking, refusesTemperatureWithTopP, thinkingModelProblems } from '../anthropic/wire-schema.js';

const oneOf = (keys: readonly string[]) => (block: Record<string, unknown>) => keys.filter((k) => block[k] !== undefined).length === 1;

// https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html
const cachePoint = z.strictObject({ type: z.literal('default') });
// Converse refuses a blank (empty or whitespace-only) text block ("The text field in the ContentBlock object at ... is blank"), in a tool result too.
const nonBlank = z.string().regex(/\S/, 'a text block must not be blank');
const toolResultContent = z.union([z.strictObject({ text: nonBlank }), z.strictObject({ json: z.record(z.string(), z.unknown()) })]);
// ToolUseBlock.toolUseId: length 1-64, pattern ^[a-zA-Z0-9_-]+$ (Converse API reference).
const toolUseId = z.string().max(64).regex(/^[a-zA-Z0-9_-]+$/);
const contentBlock = z
  .strictObject({
    text: nonBlank.optional(),
    image: z.strictObject({ format: z.enum(['png', 'jpeg', 'gif', 'webp']), source: z.strictObject({ bytes: z.base64() }) }).optional(),
    toolUse: z.strictObject({ toolUseId, name: z.string().min(1), input: z.record(z.string(), z.unknown()) }).optional(),
    toolResult: z.strictObject({ toolUseId, content: z.array(toolResultContent).min(1), status: z.enum(['success', 'error']).optional() }).optional(),
    reasoningContent: z
      .union([z.strictObject({ reasoningText: z.strictObject({ text: z.string(), signature: z.string().min(1).optional() }) }), z.strictObject({ redactedContent: z.base64() })])
      .optional(),
    cachePoint: cachePoint.optional(),
  })
  .refine(oneOf(['text', 'image', 'toolUse', 'toolResult', 'reasoningContent', 'cachePoint']), 'a content block holds exactly one member');

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/);

export const converseRequest = z.strictObject({
  messages: z.array(z.strictObject({ role: z.enum(['user', 'assistant']), content: z.array(contentBlock).min(1) })).min(1),
  system: z.array(z.union([z.strictObject({ text: nonBlank }), z.strictObject({ cachePoint })])).optional(),
  // Claude: https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html
  // Nova 2: https://docs.aws.amazon.com/nova/latest/userguide/extended-thinking.html
  // Any model-specific fields (Nova's inferenceConfig.topK, Mistral's top_k); the two the gateway sets are checked.
  additionalModelRequestFields: z
    .looseObject({
      thinking: claudeThinking.optional(),
      // Claude's effort, beside adaptive thinking: https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html
      output_config: z.strictObject({ effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']) }).optional(),
      reasoningConfig: z.strictObject({ type: z.literal('enabled'), maxReasoningEffort: z.enum(['low', 'medium', 'high']) }).optional(),
    })
    .optional(),
  // ServiceTier (Converse API reference): the capacity the call is served from.
  serviceTier: z.strictObject({ type: z.enum(['priority', 'default', 'flex', 'reserved']) }).optional(),
  // JSON Pointers of model-specific answer fields (Converse API reference: at most 10).
  additionalModelResponseFieldPaths: z.array(z.string().regex(/^\//)).min(1).max(10).optional(),
  inferenceConfig: z
    .strictObject({
      maxTokens: z.int().min(1).optional(),
      temperature: z.number().min(0).max(1).optional(),
      topP: z.number().min(0).max(1).optional(),
      stopSequences: z.array(z.string()).max(4).optional(),
    })
    .optional(),
  toolConfig: z
    .strictObject({
      // A Tool is a toolSpec or a cachePoint after the tools before it.
      tools: z.array(z.union([z.strictObject({ toolSpec: z.strictObject({ name: toolName, description: z.string().min(1).optional(), inputSchema: z.strictObject({ json: z.looseObject({ type: z.literal('object') }) }) }) }), z.strictObject({ cachePoint })])).min(1),
      toolChoice: z.union([z.strictObject({ auto: z.strictObject({}) }), z.strictObject({ any: z.strictObject({}) }), z.strictObject({ tool: z.strictObject({ name: toolName }) })]).optional(),
    })
    .optional(),
});

export type ConverseRequest = z.output<typeof converseRequest>;

export const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
export const REGION = 'us-east-1';

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([a-z0-9-]+)\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/** Checks the Authorization header's form, then signs the received request again with the same library and compares. */
export async function sigV4Problems(seen: Seen, credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } = CREDENTIALS): Promise<string[]> {
  const auth = String(seen.headers['authorization'] ?? '');
  const match = AUTHORIZATION.exec(auth);
  if (match === null) return [`authorization is not a SigV4 header: ${auth}`];
  const [, keyId, day, region, signedList = ''] = match;
  const amzDate = String(seen.headers['x-amz-date'] ?? '');
  const problems: string[] = [];
  if (keyId !== credentials.accessKeyId) problems.push(`signed with key ${keyId}`);
  if (region !== REGION) problems.push(`signed for region ${region}`);
  if (!/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== day) problems.push(`x-amz-date ${amzDate} does not match the credential scope`);
  const signed = signedList.split(';');
  for (const required of ['host', 'x-amz-date', 'content-type']) if (!signed.includes(required)) problems.push(`${required} is not signed`);
  if (credentials.sessionToken !== undefined && (seen.headers['x-amz-security-token'] !== credentials.sessionToken || !signed.includes('x-amz-security-token'))) problems.push('x-amz-security-token missing or unsigned');
  if (problems.length > 0) return problems;

  const [host, port] = String(seen.headers['host']).split(':');
  const signer = new SignatureV4({ service: 'bedrock', region: REGION, sha256: Sha256, credentials });
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const again = await signer.sign(
    {
      method: seen.method,
      protocol: 'http:',
      hostname: host ?? '',
      ...(port !== undefined ? { port: Number(port) } : {}),
      path: seen.path,
      query: {},
      headers: Object.fromEntries(signed.map((name) => [name, String(seen.headers[name])])),
      body: seen.raw.toString('utf8'),
    },
    { signingDate },
  );
  if (again.headers['authorization'] !== auth) problems.push('SigV4 signature does not verify');
  return problems;
}

export function conversationProblems(body: ConverseRequest): string[] {
  const problems: string[] = [];
  const fields = body.additionalModelRequestFields;
  const thinking = fields?.thinking?.type === 'disabled' ? undefined : fields?.thinking;
  if (thinking?.type === 'enabled' && thinking.budget_tokens >= (body.inferenceConfig?.maxTokens ?? 0)) problems.push('body additionalModelRequestFields.thinking.budget_tokens: must be below inferenceConfig.maxTokens');
  // Claude with thinking, as on Anthropic's API: https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html
  const sampling = body.inferenceConfig;
  if (thinking !== undefined && sampling?.temperature !== undefined && sampling.temperature !== 1) problems.push('body inferenceConfig.temperature: may only be set to 1 when thinking is enabled');
  if (thinking !== undefined && sampling?.topP !== undefined && sampling.topP < 0.95) problems.push('body inferenceConfig.topP: must be between 0.95 and 1 when thinking is enabled');
  const forced = body.toolConfig?.toolChoice;
  if (thinking !== undefined && forced !== undefined && !('auto' in forced)) problems.push('body toolConfig.toolChoice: thinking may not be used with a forced tool choice (any or tool)');
  if (body.messages[0]?.role !== 'user') problems.push('body messages.0: the conversation must start with a user message');
  // Converse checks an image's bytes against its format.
  for (const block of body.messages.flatMap((m) => m.content)) {
    const actual = block.image === undefined ? undefined : imageTypeOfBytes(block.image.source.bytes);
    if (actual !== undefined && actual !== block.image?.format) problems.push(`body image: the format ${block.image?.format} does not match the image's bytes (${actual})`);
  }
  const usesTools = body.messages.some((m) => m.content.some((b) => b.toolUse !== undefined || b.toolResult !== undefined));
  if (usesTools && body.toolConfig === undefined) problems.push('body: toolConfig is required when messages hold toolUse or toolResult blocks');
  body.messages.forEach((message, i) => {
    if (i > 0 && body.messages[i - 1]?.role === message.role) problems.push(`body messages.${i}: two ${message.role} turns in a row`);
    const ids = message.content.flatMap((b) => (b.toolUse !== undefined ? [b.toolUse.toolUseId] : []));
    if (ids.length === 0) return;
    if (thinking !== undefined && i === body.messages.length - 2 && message.content[0]?.reasoningContent === undefined) {
      problems.push(`body messages.${i}: with thinking enabled, an assistant turn with toolUse must start with its reasoningContent`);
    }
    const answered = body.messages[i + 1]?.content.flatMap((b) => (b.toolResult !== undefined ? [b.toolResult.toolUseId] : [])) ?? [];
    if (answered.join(',') !== ids.join(',')) problems.push(`body messages.${i + 1}: must hold toolResult blocks for ${ids.join(', ')}`);
  });
  return problems;
}

export function requestProblems(seen: Seen): string[] {
  const problems: string[] = [];
  if (seen.method !== 'POST' || !/^\/model\/[^/]+\/(converse|converse-stream)$/.test(seen.path)) problems.push(`request line ${seen.method} ${seen.path}`);
  if (seen.path.includes(':')) problems.push('the model id in the path must be URL-encoded');
  if (seen.headers['content-type'] !== 'application/json') problems.push('content-type is not application/json');
  const shape = zodProblems(converseRequest, seen.body, 'body');
  problems.push(...shape);
  if (shape.length > 0) return problems;
  const body = converseRequest.parse(seen.body);
  problems.push(...conversationProblems(body));
  const model = decodeURIComponent(seen.path.split('/')[2] ?? '');
  if (/anthropic\.|claude/i.test(model)) problems.push(...claudeProblems(body, model));
  return problems;
}

/** What Claude refuses beyond Converse's own checks, as Anthropic's API does (Bedrock answers them as "The model returned the following errors: ..."). */
function claudeProblems(body: ConverseRequest, model: string): string[] {
  const problems: string[] = [];
  const fields = body.additionalModelRequestFields;
  problems.push(...thinkingModelProblems(model, fields?.thinking?.type, fields?.output_config?.effort, 'body: The model returned the following errors'));
  if (refusesTemperatureWithTopP(model) && body.inferenceConfig?.temperature !== undefined && body.inferenceConfig.topP !== undefined) problems.push('body: The model returned the following errors: `temperature` and `top_p` cannot both be specified for this model. Please use only one.');
  if (body.inferenceConfig?.stopSequences?.some((stop) => stop.trim() === '') === true) problems.push('body inferenceConfig.stopSequences: each stop sequence must contain non-whitespace');
  // A cachePoint is a marker after the block it caches, not content.
  const last = body.messages.at(-1);
  const lastBlock = last?.role === 'assistant' ? last.content.findLast((block) => block.cachePoint === undefined) : undefined;
  if (lastBlock?.text !== undefined && /\s$/.test(lastBlock.text)) problems.push('body messages: final assistant content cannot end with trailing whitespace');
  return problems;
}
