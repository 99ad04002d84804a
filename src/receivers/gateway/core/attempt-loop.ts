// The fallback loop every protocol shares: try the planned endpoints in order
// until one answers or a failure must not fall back, then answer with the
// last failure (its provider, and how many attempts were made). A provider
// without credentials, and a provider type's refusal of what it cannot carry,
// only let the next endpoint try: they are the answer when no upstream failed,
// never in place of an upstream's own failure (an overloaded Anthropic's 529
// stays the answer when the Bedrock endpoint after it cannot take the
// request's documents, or has no credentials).
import type { Endpoint } from './catalog.js';
import type { ClientLink } from './client-link.js';
import { GatewayHttpError } from './http-error.js';
import type { AttemptEnv, AttemptResult, ResolvedProvider } from './attempt.js';
import { PROVIDER_NOT_CONFIGURED, UNSUPPORTED_VALUE } from './attempt-failure.js';
import type { Router } from './routing.js';
import type { SpanRecord } from './spans.js';

export interface PlanEnv extends AttemptEnv {
  readonly router: Router;
  readonly providers: ReadonlyMap<string, ResolvedProvider>;
}

export interface PlanState {
  readonly server: SpanRecord;
  readonly client: ClientLink;
  attempts: number;
}

/**
 * Which failure answers when every endpoint failed: an upstream's own (2)
 * before a provider without credentials (1) before a provider type's refusal
 * (0); among equals, the later.
 */
function answerRank(error: GatewayHttpError): number {
  if (error.errorCode === UNSUPPORTED_VALUE) return 0;
  if (error.errorCode === PROVIDER_NOT_CONFIGURED) return 1;
  return 2;
}

/** One attempt on one endpoint; it answers the client itself on success. */
export type TryEndpoint<S extends PlanState> = (env: AttemptEnv, provider: ResolvedProvider, endpoint: Endpoint, state: S) => Promise<AttemptResult>;

/** Resolves when an attempt answered (or the client left); throws the failure to answer otherwise. */
export async function runPlan<S extends PlanState>(env: PlanEnv, plan: readonly Endpoint[], state: S, attempt: TryEndpoint<S>): Promise<void> {
  let last: GatewayHttpError | undefined;
  let lastProvider: string | undefined;
  for (const endpoint of plan) {
    if (state.client.closed) return;
    const provider = env.providers.get(endpoint.provider);
    if (provider === undefined) continue; // config validation makes this unreachable
    const result = await attempt(env, provider, endpoint, state);
    if (result.answered) {
      state.server.str('sluice.provider', provider.slug);
      return;
    }
    if (last === undefined || answerRank(result.error) >= answerRank(last)) {
      last = result.error;
      lastProvider = provider.slug;
    }
    if (!result.fallback) break;
  }
  if (state.client.closed) return;
  const failure = last ?? new GatewayHttpError(502, 'No upstream attempt was made.', { type: 'api_error', code: 'upstream_error' });
  // The failure answered is the last attempt's: its provider is named as a success's is.
  const headers: Record<string, string> = lastProvider === undefined ? {} : { 'x-sluice-provider': lastProvider };
  throw failure.withHeaders({ ...headers, 'x-sluice-attempts': String(state.attempts) });
}
