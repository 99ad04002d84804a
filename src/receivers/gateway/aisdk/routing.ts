// providerMetadata.gateway.routing: the attempts a request made, so an app
// sees which provider and model answered after a fallback. The names follow
// those Vercel's gateway gives the same facts (originalModelId,
// finalProvider; per attempt provider, providerApiModelId, success,
// statusCode); finalModelId and an attempt's modelId name the catalog model
// an endpoint serves, which differs from the one asked for after a
// providerOptions.gateway.models fallback.
import type { AttemptResult } from '../core/attempt.js';
import type { PlanState, TryEndpoint } from '../core/attempt-loop.js';
import type { Endpoint } from '../core/catalog.js';

export interface RoutingAttempt {
  /** Provider slug. */
  provider: string;
  /** The catalog model the endpoint serves. */
  modelId: string;
  /** The model name sent upstream. */
  providerApiModelId: string;
  success: boolean;
  /** A failed attempt's status (the HTTP answer an in-band or gateway-side failure stands for). */
  statusCode?: number;
}

export interface GatewayRouting {
  /** The model the client asked for. */
  originalModelId: string;
  finalProvider: string;
  finalModelId: string;
  attempts: RoutingAttempt[];
}

/** The attempts of one request, in order; the last one is the attempt that answers. */
export class AttemptLog {
  readonly #attempts: RoutingAttempt[] = [];

  begin(slug: string, endpoint: Endpoint): void {
    this.#attempts.push({ provider: slug, modelId: endpoint.modelId, providerApiModelId: endpoint.model, success: false });
  }

  end(result: AttemptResult): void {
    const last = this.#attempts.at(-1);
    if (last !== undefined && !result.answered) last.statusCode = result.error.status;
  }

  /** The routing once the last attempt has answered. */
  answered(originalModelId: string): GatewayRouting {
    const attempts = this.#attempts.map((attempt, i) => (i === this.#attempts.length - 1 ? { ...attempt, success: true } : attempt));
    const final = attempts.at(-1);
    return { originalModelId, finalProvider: final?.provider ?? '', finalModelId: final?.modelId ?? originalModelId, attempts };
  }
}

/** `attempt`, each of whose attempts (and a failure's status) `log` records. */
export function logged<S extends PlanState>(log: AttemptLog, attempt: TryEndpoint<S>): TryEndpoint<S> {
  return async function loggedAttempt(env, provider, endpoint, state) {
    log.begin(provider.slug, endpoint);
    const result = await attempt(env, provider, endpoint, state);
    log.end(result);
    return result;
  };
}
