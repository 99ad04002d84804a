// What the gateway asks of usage accounting, per request: admit it (budget,
// tokens_per_minute, requests_per_minute of its key), charge each billable
// attempt (cost at the answering endpoint's prices, metrics, spend, tokens
// per minute) and record the generation when the response ends.
import type { Logger } from 'pino';
import type { GenerationStore } from '../cluster/generation-store.js';
import type { RateDecision, RateLimiter, RateLimitOptions } from '../cluster/rate-limiter.js';
import type { SpendLedger } from '../cluster/spend-ledger.js';
import { errorMessage } from '../shared/errors.js';
import type { GenerationRecord } from '../shared/generation.js';
import type { UsageMetrics } from './metrics.js';
import { usdNumberToCost, type Cost } from '../shared/money.js';
import type { BudgetPeriod } from '../shared/periods.js';
import { costOf, type Prices } from './pricing.js';
import type { TokenCounts } from '../shared/tokens.js';
import type { Served } from './meter.js';

const MINUTE_MS = 60_000;

export interface KeyLimits {
  readonly name: string;
  readonly requestsPerMinute: number | undefined;
  readonly tokensPerMinute: number | undefined;
  readonly budget: { readonly usd: number; readonly period: BudgetPeriod } | undefined;
}

/** A key as the accountant holds it: its limits, with limiters and budget made once. */
export interface AccountKey {
  readonly name: string;
  readonly requests: RateLimiter | undefined;
  readonly tokens: RateLimiter | undefined;
  readonly budget: { readonly cost: Cost; readonly period: BudgetPeriod } | undefined;
}

export type Refusal =
  | { readonly reason: 'budget_exceeded'; readonly period: BudgetPeriod }
  | { readonly reason: 'requests_per_minute' | 'tokens_per_minute'; readonly retryAfterMs: number };

/** What a key's limit leaves of its window: the allowance, what is left of it, and the ms until the window ends. */
export interface RateAllowance {
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
}

/** Whether a request may go on, and what its key's per-minute limit leaves (undefined for a key without that limit). */
export interface Admission {
  readonly refusal: Refusal | undefined;
  readonly allowance: RateAllowance | undefined;
}

export const UNLIMITED: Admission = { refusal: undefined, allowance: undefined };

export interface AccountantDeps {
  readonly rateLimiter: (options: RateLimitOptions) => RateLimiter;
  readonly ledger: SpendLedger;
  readonly generations: GenerationStore;
  readonly metrics: UsageMetrics;
  readonly logger: Logger;
}

export class Accountant {
  readonly #deps: AccountantDeps;

  constructor(deps: AccountantDeps) {
    this.#deps = deps;
  }

  get generations(): GenerationStore {
    return this.#deps.generations;
  }

  key(limits: KeyLimits): AccountKey {
    const limiter = this.#deps.rateLimiter;
    return {
      name: limits.name,
      requests: limits.requestsPerMinute === undefined ? undefined : limiter({ name: 'rpm', points: limits.requestsPerMinute, windowMs: MINUTE_MS }),
      tokens: limits.tokensPerMinute === undefined ? undefined : limiter({ name: 'tpm', points: limits.tokensPerMinute, windowMs: MINUTE_MS }),
      budget: limits.budget === undefined ? undefined : { cost: usdNumberToCost(limits.budget.usd), period: limits.budget.period },
    };
  }

  /** Counts one request against requests_per_minute; any route with a key pays it. */
  async admitRequest(key: AccountKey): Promise<Admission> {
    if (key.requests === undefined) return UNLIMITED;
    return admission(key.requests, await key.requests.consume(key.name, 1), 'requests_per_minute');
  }

  /** A generation is refused once the key's budget for this period is spent, or its tokens for this minute are. */
  async admitGeneration(key: AccountKey, nowMs: number): Promise<Admission> {
    const budget = key.budget;
    // Asked together: with shared state each is a Redis command, and they travel in one round trip's time.
    const [spent, tokens] = await Promise.all([
      budget === undefined ? undefined : this.#deps.ledger.spent(key.name, budget.period, nowMs),
      key.tokens?.check(key.name),
    ]);
    const byTokens = key.tokens === undefined || tokens === undefined ? UNLIMITED : admission(key.tokens, tokens, 'tokens_per_minute');
    if (budget !== undefined && spent !== undefined && spent >= budget.cost) return { refusal: { reason: 'budget_exceeded', period: budget.period }, allowance: byTokens.allowance };
    return byTokens;
  }

  /** One attempt that reported usage: its cost, counted in metrics, spend and tokens per minute. */
  charge(key: AccountKey, served: Served, tokens: TokenCounts, nowMs: number): Cost {
    const cost = served.prices === undefined ? 0n : costOf(tokens, served.prices);
    this.#deps.metrics.count(key.name, served, tokens, cost);
    const logger = this.#deps.logger;
    this.#deps.ledger.add(key.name, cost, nowMs).catch(function spendNotRecorded(err: unknown) {
      logger.error({ key: key.name, err: errorMessage(err) }, 'spend not recorded');
    });
    key.tokens?.record(key.name, tokens.input + tokens.output).catch(function tokensNotCounted(err: unknown) {
      logger.warn({ key: key.name, err: errorMessage(err) }, 'tokens per minute not counted');
    });
    return cost;
  }

  record(generation: GenerationRecord): void {
    this.#deps.generations.add(generation);
  }
}

function admission(limiter: RateLimiter, decision: RateDecision, reason: 'requests_per_minute' | 'tokens_per_minute'): Admission {
  const limit = limiter.options.points;
  if (decision.allowed) return { refusal: undefined, allowance: { limit, remaining: decision.remaining, resetMs: decision.resetMs } };
  return { refusal: { reason, retryAfterMs: decision.retryAfterMs }, allowance: { limit, remaining: 0, resetMs: decision.retryAfterMs } };
}
