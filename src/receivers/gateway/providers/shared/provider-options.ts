// providerOptions.<slug> (or .<type>) on a request: the provider's own
// request fields, as the AI SDK passes them through the gateway. They are
// added to the upstream body where the mapped request left the field unset,
// so the gateway's own mapping (model, messages, tools) always wins.
// OpenAI and Anthropic take snake_case (`parallelToolCalls` arrives as
// `parallel_tool_calls`); Gemini and Bedrock take their camelCase as given.
import type { ChatCompletionRequest } from './openai-types.js';
import { asObject } from './inputs.js';

/** The options addressed to this provider: by its slug first, else by its type; never the gateway's own. */
export function providerOptionsFor(request: { readonly providerOptions?: ChatCompletionRequest['providerOptions'] }, slug: string, type: string): Record<string, unknown> | undefined {
  const all = request.providerOptions;
  if (all === undefined) return undefined;
  const own = slug !== 'gateway' ? all[slug] : undefined;
  return asObject(own ?? all[type]);
}

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function snakeDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeDeep);
  const object = asObject(value);
  if (object === undefined) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(object)) out[snakeCase(key)] = snakeDeep(v);
  return out;
}

/** Adds `options` to `target` where it has no such field; snake_case for the APIs that spell fields so. */
export function addOptions(target: Record<string, unknown>, options: Record<string, unknown>, style: 'snake_case' | 'as-is'): void {
  for (const [key, value] of Object.entries(options)) {
    const name = style === 'snake_case' ? snakeCase(key) : key;
    if (target[name] === undefined) target[name] = style === 'snake_case' ? snakeDeep(value) : value;
  }
}
