// Each gateway key's usage from the usage records (durable, shared in cluster
// mode): today's requests, tokens and cost from the generation rollups, and
// for a key with a budget what it spent in the budget's current period, from
// the same ledger that enforces the budget.
import type { SharedState } from '../../cluster/state.js';
import { costToNumber } from '../../shared/money.js';
import { dayOf } from '../../shared/periods.js';
import type { GatewayCatalog } from './catalog.js';

export interface KeyUsage {
  name: string;
  /** The UTC day the `today` figures cover. */
  day: string;
  today: { requests: number; tokens: number; costUsd: number };
  budget: { usd: number; period: string; spentUsd: number } | null;
}

export async function keyUsage(catalogs: readonly GatewayCatalog[], state: SharedState | undefined, now: number): Promise<KeyUsage[]> {
  // A key on two gateways under one name shares its usage: it is listed once.
  const keys = [...new Map(catalogs.flatMap((catalog) => catalog.keys).map((key) => [key.name, key] as const)).values()];
  // No gateway, no usage stores: never open them just to answer the console.
  if (keys.length === 0 || state === undefined) return [];
  const day = dayOf(now);
  const ledger = keys.some((key) => key.budget !== null) ? await state.spendLedger() : undefined;
  // Asked together: in cluster mode each is a Redis command, so a stalled Redis is waited for once (redis.timeout), not once per key.
  const [rows, spent] = await Promise.all([
    state.generationStore().then((generations) => generations.rollups(day, day)),
    Promise.all(keys.map((key) => (key.budget === null || ledger === undefined ? undefined : ledger.spent(key.name, key.budget.period, now)))),
  ]);
  const usage: KeyUsage[] = [];
  keys.forEach((key, i) => {
    const today = { requests: 0, tokens: 0, costUsd: 0 };
    let cost = 0n;
    for (const row of rows) {
      if (row.key !== key.name) continue;
      today.requests += row.totals.requests;
      today.tokens += row.totals.input + row.totals.output;
      cost += row.totals.cost;
    }
    today.costUsd = costToNumber(cost);
    const keySpent = spent[i];
    const budget = key.budget === null || keySpent === undefined ? null : { usd: key.budget.usd, period: key.budget.period, spentUsd: costToNumber(keySpent) };
    usage.push({ name: key.name, day, today, budget });
  });
  return usage;
}
