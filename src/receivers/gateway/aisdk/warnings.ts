// The warnings of a language-model answer (the whole answer's `warnings`, a
// stream's `stream-start`), which the AI SDK gives the app as
// result.warnings: what of the call this gateway drops or changes for the
// provider that answers. Only what the translation knows it leaves out (the
// README's tables); what reaches the provider as asked gets no warning, and
// what a provider type cannot take at all is a 400, not a warning.
import type { ChatCompletionRequest } from '../providers/shared/openai-types.js';
import { takesReasoning } from './request.js';
import type { LanguageModelCall } from './schema.js';

export interface AiSdkWarning {
  type: 'unsupported';
  feature: string;
  details: string;
}

/** Provider types without penalties: a penalty of 0, which changes nothing, is left out (any other is a 400). */
const NO_PENALTIES: ReadonlySet<string> = new Set(['anthropic', 'bedrock']);

/** Provider types that cache prompts by themselves and leave breakpoints out. */
const OWN_CACHING: ReadonlySet<string> = new Set(['openai', 'google']);

/** The warnings for `call`, translated to `request`, when provider `slug` of type `type` answers it with `model`. */
export function callWarnings(call: LanguageModelCall, request: ChatCompletionRequest, slug: string, type: string, model: string): AiSdkWarning[] {
  const warnings: AiSdkWarning[] = [];
  if ((call.reasoning === 'xhigh' || call.reasoning === 'max') && !takesReasoning(call, type, model)) {
    warnings.push({ type: 'unsupported', feature: 'reasoning', details: `reasoning ${call.reasoning} was sent as high, the highest effort this gateway asks of a provider` });
  }
  if (NO_PENALTIES.has(type)) {
    for (const feature of ['presencePenalty', 'frequencyPenalty'] as const) {
      if (call[feature] === 0) warnings.push({ type: 'unsupported', feature, details: `provider ${slug} (type ${type}) has no ${feature}; 0 was left out` });
    }
  }
  if (OWN_CACHING.has(type) && hasCacheBreakpoint(request)) {
    warnings.push({ type: 'unsupported', feature: 'cacheControl', details: `provider ${slug} (type ${type}) caches prompts by itself; the prompt-caching breakpoints were left out` });
  }
  for (const key of ignoredProviderOptions(request, slug, type)) {
    warnings.push({ type: 'unsupported', feature: `providerOptions.${key}`, details: `provider ${slug} (type ${type}) answered; the options for ${key} were not sent to it` });
  }
  return warnings;
}

function hasCacheBreakpoint(request: ChatCompletionRequest): boolean {
  if (request.tools?.some((tool) => 'cache_control' in tool && tool.cache_control !== undefined) === true) return true;
  return request.messages.some((message) => Array.isArray(message.content) && (message.content as ReadonlyArray<{ cache_control?: unknown }>).some((part) => part.cache_control !== undefined));
}

/**
 * The providerOptions keys the answering provider did not read: it reads its
 * slug's, else its type's (provider-options.ts); the gateway's own are
 * routing. A key left empty once its reasoning controls became the
 * gateway's reasoning request (which every type maps) was used.
 */
function ignoredProviderOptions(request: ChatCompletionRequest, slug: string, type: string): string[] {
  const all = request.providerOptions;
  if (all === undefined) return [];
  const read = slug !== 'gateway' && all[slug] !== undefined ? slug : type;
  return Object.entries(all)
    .filter(([key, options]) => key !== 'gateway' && key !== read && !isEmptyObject(options))
    .map(([key]) => key);
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}
