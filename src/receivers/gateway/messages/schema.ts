// The Messages request as the gateway checks it before routing. Loose on
// purpose: to `anthropic` providers the body travels as it came, so only what
// the gateway itself reads is checked here; what a translation cannot carry
// is refused per provider type (to-chat.ts), naming the field.
import { z } from 'zod';
import { gatewayOptionsSchema } from '../core/gateway-options.js';
import { isMissing } from '../core/schema-problem.js';


const cacheControl = z.looseObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });
const block = z.looseObject({ type: z.string().min(1), cache_control: cacheControl.nullable().optional() });
const message = z.looseObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(block)]) });
// Toolsets (mcp_toolset, computer_toolset_...) have no name: a custom tool's is required where it is translated.
const tool = z.looseObject({ name: z.string().min(1).optional(), type: z.string().nullable().optional(), cache_control: cacheControl.nullable().optional() });

const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
]);

// enabled (with a budget), disabled, adaptive, between_tools, and types yet to come.
const thinking = z.looseObject({ type: z.string().min(1), budget_tokens: z.int().min(1024).optional() });
const outputConfig = z.looseObject({
  effort: z.string().nullable().optional(),
  format: z.looseObject({ type: z.string().min(1), schema: z.record(z.string(), z.unknown()).optional() }).nullable().optional(),
});

export const messagesRequestSchema = z
  .looseObject({
    model: z.string().min(1),
    max_tokens: z.int().positive(),
    messages: z.array(message).min(1),
    system: z.union([z.string(), z.array(block)]).optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.int().nonnegative().optional(),
    stop_sequences: z.array(z.string()).optional(),
    metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
    tools: z.array(tool).optional(),
    tool_choice: toolChoice.optional(),
    thinking: thinking.optional(),
    output_config: outputConfig.optional(),
    providerOptions: z.looseObject({ gateway: gatewayOptionsSchema.optional() }).optional(),
  })
  // Whether the budget must fit under max_tokens is the provider's to say: with
  // interleaved thinking Anthropic lets it exceed max_tokens (it spans the turn's
  // thinking blocks); Claude on Bedrock refuses it, naming thinking.budget_tokens.
  .superRefine(function budgetGiven(request, ctx) {
    if (request.thinking?.type === 'enabled' && request.thinking.budget_tokens === undefined) ctx.addIssue({ code: 'custom', path: ['thinking', 'budget_tokens'], message: 'Field required' });
  });

/** count_tokens takes the same body without max_tokens. */
export const countTokensRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(block)]).optional(),
  tools: z.array(tool).optional(),
  providerOptions: z.looseObject({ gateway: gatewayOptionsSchema.optional() }).optional(),
});

export type MessagesRequest = z.output<typeof messagesRequestSchema>;

/** The first problem as `field.path: message`, the way Anthropic words its 400s. */
export function describeProblem(error: z.ZodError): { param: string; message: string } {
  const issue = error.issues[0];
  if (issue === undefined) return { param: '', message: 'invalid request' };
  const param = issue.path.map((key, i) => (typeof key === 'number' ? `.${key}` : i === 0 ? String(key) : `.${String(key)}`)).join('');
  const what = issue.code === 'invalid_type' && isMissing(issue) ? 'Field required' : issue.message;
  return { param, message: param === '' ? what : `${param}: ${what}` };
}
