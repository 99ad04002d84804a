// GET /v1/report and GET /v1/generation answered in the shapes
// @ai-sdk/gateway's getSpendReport() and getGenerationInfo() parse:
// snake_case fields, costs as USD numbers (the nearest double to the exact
// total), report rows grouped from daily rollups.
import type { GenerationRecord, RollupRow, RollupTotals } from '../shared/generation.js';
import { emptyTotals, mergeTotals } from '../shared/generation.js';
import { costToNumber } from '../shared/money.js';
import { dayStart } from '../shared/periods.js';

export const GROUP_BY = ['day', 'model', 'provider', 'key', 'user', 'credential_type'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** The longest report range, in days (inclusive). */
export const MAX_REPORT_DAYS = 366;
const MS_PER_DAY = 86_400_000;

export interface ReportQuery {
  readonly startDay: string;
  readonly endDay: string;
  readonly groupBy: GroupBy;
  /** Only this key's records (a gateway key's own name, or the admin's user_id filter). */
  readonly key: string | undefined;
  readonly model: string | undefined;
  readonly provider: string | undefined;
}

export class ReportQueryError extends Error {
  readonly param: string;

  constructor(param: string, message: string) {
    super(message);
    this.param = param;
  }
}

/**
 * A query parameter's value, or null when absent. One given twice is refused:
 * reading the first (URLSearchParams.get) would drop the other unsaid, and a
 * report filtered by one model when two were asked for looks like an answer.
 */
export function queryValue(params: URLSearchParams, name: string): string | null {
  const values = params.getAll(name);
  if (values.length > 1) throw new ReportQueryError(name, `${name} must be given once, not ${values.length} times`);
  return values[0] ?? null;
}

/** Reads the query string; `ownKey` (a gateway key's name) overrides any user_id filter; undefined for the admin key. */
export function parseReportQuery(params: URLSearchParams, ownKey: string | undefined): ReportQuery {
  const startDay = queryValue(params, 'start_date') ?? '';
  const endDay = queryValue(params, 'end_date') ?? '';
  const start = dayStart(startDay);
  const end = dayStart(endDay);
  if (start === undefined) throw new ReportQueryError('start_date', 'start_date must be a date like 2026-11-01');
  if (end === undefined) throw new ReportQueryError('end_date', 'end_date must be a date like 2026-11-30');
  if (end < start) throw new ReportQueryError('end_date', 'end_date must not be before start_date');
  if ((end - start) / MS_PER_DAY + 1 > MAX_REPORT_DAYS) throw new ReportQueryError('end_date', `a report covers at most ${MAX_REPORT_DAYS} days`);
  const groupBy = queryValue(params, 'group_by') ?? 'day';
  if (!(GROUP_BY as readonly string[]).includes(groupBy)) throw new ReportQueryError('group_by', `group_by must be one of ${GROUP_BY.join(', ')}`);
  const datePart = queryValue(params, 'date_part');
  if (datePart !== null && datePart !== 'day') throw new ReportQueryError('date_part', 'date_part must be day: usage is rolled up by day');
  if (params.has('tags')) throw new ReportQueryError('tags', 'tags are not recorded by this gateway');
  const credential = queryValue(params, 'credential_type');
  if (credential !== null && credential !== 'system' && credential !== 'byok') throw new ReportQueryError('credential_type', 'credential_type must be byok or system');
  const userId = queryValue(params, 'user_id') ?? undefined;
  // A gateway key reads only its own records: a user_id naming another key matches nothing, not the caller's own.
  const key = credential === 'byok' || (ownKey !== undefined && userId !== undefined && userId !== ownKey) ? '\u0000none' : (ownKey ?? userId);
  return {
    startDay,
    endDay,
    groupBy: groupBy as GroupBy,
    // Every key is the gateway's own credential: a byok filter matches nothing.
    key,
    model: queryValue(params, 'model') ?? undefined,
    provider: queryValue(params, 'provider') ?? undefined,
  };
}

export interface ReportRow {
  day?: string;
  model?: string;
  provider?: string;
  user?: string;
  key?: string;
  credential_type?: 'system';
  total_cost: number;
  market_cost: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_creation_input_tokens: number;
  reasoning_tokens: number;
  request_count: number;
}

/** Groups the rollups of the query's days into report rows: by day in date order, otherwise by cost, highest first. */
export function buildReport(rollups: readonly RollupRow[], query: ReportQuery): { results: ReportRow[] } {
  const groups = new Map<string, RollupTotals>();
  for (const row of rollups) {
    if (query.key !== undefined && row.key !== query.key) continue;
    if (query.model !== undefined && row.model !== query.model) continue;
    if (query.provider !== undefined && row.provider !== query.provider) continue;
    const group = groupOf(row, query.groupBy);
    let totals = groups.get(group);
    if (totals === undefined) {
      totals = emptyTotals();
      groups.set(group, totals);
    }
    mergeTotals(totals, row.totals);
  }
  const results = [...groups].map(([group, totals]) => toRow(group, totals, query.groupBy));
  if (query.groupBy === 'day') results.sort((a, b) => ((a.day ?? '') < (b.day ?? '') ? -1 : 1));
  else results.sort((a, b) => b.total_cost - a.total_cost);
  return { results };
}

function groupOf(row: RollupRow, groupBy: GroupBy): string {
  switch (groupBy) {
    case 'day':
      return row.day;
    case 'model':
      return row.model;
    case 'provider':
      return row.provider;
    case 'key':
    case 'user':
      return row.key;
    case 'credential_type':
      return 'system';
  }
}

function toRow(group: string, totals: RollupTotals, groupBy: GroupBy): ReportRow {
  const cost = costToNumber(totals.cost);
  const row: ReportRow = {
    total_cost: cost,
    market_cost: cost,
    input_tokens: totals.input,
    output_tokens: totals.output,
    cached_input_tokens: totals.cacheRead,
    cache_creation_input_tokens: totals.cacheWrite,
    reasoning_tokens: totals.reasoning,
    request_count: totals.requests,
  };
  if (groupBy === 'day') row.day = group;
  else if (groupBy === 'model') row.model = group;
  else if (groupBy === 'provider') row.provider = group;
  else if (groupBy === 'credential_type') row.credential_type = 'system';
  else {
    row.user = group;
    row.key = group;
  }
  return row;
}

/** The `data` of GET /v1/generation. */
export function generationInfo(record: GenerationRecord): Record<string, string | number | boolean> {
  const cost = costToNumber(record.cost);
  return {
    id: record.id,
    total_cost: cost,
    upstream_inference_cost: 0,
    usage: cost,
    created_at: new Date(record.createdAt).toISOString(),
    model: record.model,
    is_byok: false,
    provider_name: record.provider,
    streamed: record.streamed,
    finish_reason: record.finishReason,
    latency: record.latencyMs,
    generation_time: record.generationMs,
    native_tokens_prompt: record.tokens.input,
    native_tokens_completion: record.tokens.output,
    native_tokens_reasoning: record.tokens.reasoning,
    native_tokens_cached: record.tokens.cacheRead,
    native_tokens_cache_creation: record.tokens.cacheWrite,
    billable_web_search_calls: 0,
    status: record.status,
    key: record.key,
  };
}
