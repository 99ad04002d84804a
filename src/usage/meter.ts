// One request's usage as it happens: the generation id it answers under, the
// tokens and cost of each billable attempt (an attempt whose upstream
// reported usage), when its first byte went out, and at the end the
// generation record.
import type { AccountKey, Accountant } from './accountant.js';
import { newGenerationId } from '../shared/generation-id.js';
import { costToNumber, type Cost } from '../shared/money.js';
import { costOf, type Prices } from './pricing.js';
import { addTokens, NO_TOKENS, type TokenCounts } from '../shared/tokens.js';

/** Who served an attempt: the catalog id, the provider slug and that endpoint's prices. */
export interface Served {
  readonly modelId: string;
  readonly provider: string;
  readonly prices: Prices | undefined;
  /** The id is a `<provider>/<model>` the catalog does not list, as the client wrote it. */
  readonly unlisted: boolean;
}

export class UsageMeter {
  readonly generationId: string;
  readonly key: AccountKey;
  readonly #accountant: Accountant;
  readonly #startedAt: number;
  /** The catalog id of the model the last attempt went to (a fallback model's, when one answered). */
  model = '';
  streamed = false;
  provider = '';
  finishReason = '';
  tokens: TokenCounts = NO_TOKENS;
  cost: Cost = 0n;
  /** What the key's per-minute limits leave, as an answer's headers (refusal.ts); undefined without limits. */
  limits: Record<string, string> | undefined = undefined;
  /** True once an attempt at a priced endpoint was charged: only then do answers show a cost. */
  priced = false;
  #attempted = false;
  /** A stream's latest usage report, charged when its attempt settles (settle()). */
  #reported: { readonly served: Served; readonly tokens: TokenCounts; readonly cost: Cost } | undefined;
  #firstByteAt: number | undefined;
  #finished = false;

  constructor(accountant: Accountant, key: AccountKey, startedAt: number, generationId: string = newGenerationId(startedAt)) {
    this.#accountant = accountant;
    this.key = key;
    this.#startedAt = startedAt;
    this.generationId = generationId;
  }

  /** An upstream attempt began: the request becomes a generation, whatever its outcome. */
  attempt(served: Served, streamed: boolean): void {
    this.#attempted = true;
    this.streamed = streamed;
    this.provider = served.provider;
    this.model = served.modelId;
  }

  /** An attempt reported usage: its cost at that endpoint's prices, added to the request's. */
  charge(served: Served, tokens: TokenCounts): Cost {
    const cost = this.#accountant.charge(this.key, served, tokens, Date.now());
    this.tokens = addTokens(this.tokens, tokens);
    if (served.prices !== undefined) this.priced = true;
    this.cost += cost;
    return cost;
  }

  /**
   * A streamed attempt's usage report. Reports are cumulative (an upstream
   * may send usage on every chunk, each counting from the start), so each
   * replaces the last; the latest is charged once, by settle(), when the
   * attempt completes or fails. Meanwhile costUsd includes it, so the chunk
   * carrying it shows its cost.
   */
  report(served: Served, tokens: TokenCounts): void {
    this.#reported = { served, tokens, cost: served.prices === undefined ? 0n : costOf(tokens, served.prices) };
    if (served.prices !== undefined) this.priced = true;
  }

  /** Charges the attempt's latest report, if any (once); returns its cost. */
  settle(): Cost | undefined {
    const reported = this.#reported;
    if (reported === undefined) return undefined;
    this.#reported = undefined;
    return this.charge(reported.served, reported.tokens);
  }

  /** The request's cost so far in USD, as answers show it. */
  get costUsd(): number {
    return costToNumber(this.cost + (this.#reported?.cost ?? 0n));
  }

  firstByte(): void {
    this.#firstByteAt ??= Date.now();
  }

  /** Records the generation once, when the response ended (requests refused before any attempt are not generations). */
  finish(status: number): void {
    if (this.#finished || !this.#attempted) return;
    this.#finished = true;
    this.settle();
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
