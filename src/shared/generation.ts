// One answered gateway request as the usage records keep it, and its
// serialized form (JSON, cost as exact decimal text).
import { formatUsd, parseUsd, type Cost } from './money.js';
import { dayOf } from './periods.js';
import type { TokenCounts } from './tokens.js';

export interface GenerationRecord {
  /** `gen_` + ULID. */
  readonly id: string;
  /** Ms since epoch when the request arrived. */
  readonly createdAt: number;
  /** The key's name (never the secret). */
  readonly key: string;
  /** The catalog id the client asked for. */
  readonly model: string;
  /** Slug of the provider that answered ('' when none did). */
  readonly provider: string;
  readonly streamed: boolean;
  /** The HTTP status the client got. */
  readonly status: number;
  readonly finishReason: string;
  /** Ms from arrival to the first byte sent to the client. */
  readonly latencyMs: number;
  /** Ms from arrival to the end of the response. */
  readonly generationMs: number;
  /** Summed over billable attempts. */
  readonly tokens: TokenCounts;
  readonly cost: Cost;
}

/** The dimensions daily rollups are kept by. */
export interface RollupKey {
  readonly day: string;
  readonly key: string;
  readonly model: string;
  readonly provider: string;
}

export interface RollupTotals {
  cost: Cost;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
  requests: number;
}

export type RollupRow = RollupKey & { readonly totals: RollupTotals };

export function emptyTotals(): RollupTotals {
  return { cost: 0n, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, requests: 0 };
}

export function addToTotals(totals: RollupTotals, record: Pick<GenerationRecord, 'tokens' | 'cost'>): void {
  totals.cost += record.cost;
  totals.input += record.tokens.input;
  totals.output += record.tokens.output;
  totals.cacheRead += record.tokens.cacheRead;
  totals.cacheWrite += record.tokens.cacheWrite;
  totals.reasoning += record.tokens.reasoning;
  totals.requests += 1;
}

export function mergeTotals(into: RollupTotals, from: RollupTotals): void {
  into.cost += from.cost;
  into.input += from.input;
  into.output += from.output;
  into.cacheRead += from.cacheRead;
  into.cacheWrite += from.cacheWrite;
  into.reasoning += from.reasoning;
  into.requests += from.requests;
}

export function rollupKeyOf(record: GenerationRecord): RollupKey {
  return { day: dayOf(record.createdAt), key: record.key, model: record.model, provider: record.provider };
}

type SerializedGeneration = Omit<GenerationRecord, 'cost'> & { cost: string };

export function serializeGeneration(record: GenerationRecord): string {
  const serialized: SerializedGeneration = { ...record, cost: formatUsd(record.cost) };
  return JSON.stringify(serialized);
}

export function parseGeneration(text: string): GenerationRecord {
  const parsed = JSON.parse(text) as SerializedGeneration;
  return { ...parsed, cost: parseUsd(parsed.cost) };
}
