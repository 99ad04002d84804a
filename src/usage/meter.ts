// One request's usage as it happens: the generation id it answers under, the
// tokens and cost of each billable attempt (an attempt whose upstream
// reported usage), when its first byte went out, and at the end the
// generation record.
import type { AccountKey, Accountant } from './accountant.js';
import { newGenerationId } from '../shared/generation-id.js';
import { costToNumber, type Cost } from '../shared/money.js';
import type { Prices } from './pricing.js';
import { addTokens, NO_TOKENS, type TokenCounts } from '../shared/tokens.js';

/** Who served an attempt: the catalog id, the provider slug and that endpoint's prices. */
export interface Served {
  readonly modelId: string;
  readonly provider: string;
  readonly prices: Prices | undefined;
}

export class UsageMeter {
  readonly generationId: string;
  readonly key: AccountKey;
  readonly #accountant: Accountant;
  readonly #startedAt: number;
  /** The model the client asked for, once the request is parsed. */
  model = '';
  streamed = false;
  provider = '';
  finishReason = '';
  tokens: TokenCounts = NO_TOKENS;
  cost: Cost = 0n;
  /** True once an attempt at a priced endpoint was charged: only then do answers show a cost. */
  priced = false;
  #attempted = false;
  #firstByteAt: number | undefined;
  #finished = false;

  constructor(accountant: Accountant, key: AccountKey, startedAt: number) {
    this.#accountant = accountant;
    this.key = key;
    this.#startedAt = startedAt;
    this.generationId = newGenerationId(startedAt);
  }

  /** An upstream attempt began: the request becomes a generation, whatever its outcome. */
  attempt(served: Served, streamed: boolean): void {
    this.#attempted = true;
    this.streamed = streamed;
    this.provider = served.provider;
    if (this.model === '') this.model = served.modelId;
  }

  /** An attempt reported usage: its cost at that endpoint's prices, added to the request's. */
  charge(served: Served, tokens: TokenCounts): Cost {
    const cost = this.#accountant.charge(this.key, { model: served.modelId, provider: served.provider, prices: served.prices }, tokens, Date.now());
    this.tokens = addTokens(this.tokens, tokens);
    if (served.prices !== undefined) this.priced = true;
    this.cost += cost;
    return cost;
  }

  /** The request's cost so far in USD, as answers show it. */
  get costUsd(): number {
    return costToNumber(this.cost);
  }

  firstByte(): void {
    this.#firstByteAt ??= Date.now();
  }

  /** Records the generation once, when the response ended (requests refused before any attempt are not generations). */
  finish(status: number): void {
    if (this.#finished || !this.#attempted) return;
    this.#finished = true;
    const now = Date.now();
    this.#accountant.record({
      id: this.generationId,
      createdAt: this.#startedAt,
      key: this.key.name,
      model: this.model,
      provider: this.provider,
      streamed: this.streamed,
      status,
      finishReason: this.finishReason,
      latencyMs: (this.#firstByteAt ?? now) - this.#startedAt,
      generationMs: now - this.#startedAt,
      tokens: this.tokens,
      cost: this.cost,
    });
  }
}
