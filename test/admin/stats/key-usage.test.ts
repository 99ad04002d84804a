import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayCatalog } from '../../../src/admin/stats/catalog.js';
import { keyUsage } from '../../../src/admin/stats/key-usage.js';
import { LocalState } from '../../../src/cluster/local/state.js';
import type { SpendLedger } from '../../../src/cluster/spend-ledger.js';
import type { GenerationStore } from '../../../src/cluster/generation-store.js';
import type { SharedState } from '../../../src/cluster/state.js';
import { parseUsd } from '../../../src/shared/money.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
let dir: string;
let state: LocalState;

function catalog(keys: GatewayCatalog['keys']): GatewayCatalog {
  return { receiver: 'gateway', endpoint: '127.0.0.1:0', providers: [], models: [], keys };
}

function record(key: string, createdAt: number, cost: string, input: number, output: number) {
  return {
    id: `gen_${key}${createdAt}`,
    createdAt,
    key,
    model: 'openai/gpt-4o-mini',
    provider: 'openai',
    streamed: false,
    status: 200,
    finishReason: 'stop',
    latencyMs: 10,
    generationMs: 20,
    tokens: { input, output, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    cost: parseUsd(cost),
  };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-key-usage-'));
  state = new LocalState({ storageDirectory: dir, retentionMs: 30 * 86_400_000, logger: pino({ level: 'silent' }) });
});

afterEach(async () => {
  await state.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('keyUsage', () => {
  it("reports each key's requests, tokens and cost today and its spend in the budget's period", async () => {
    const generations = await state.generationStore();
    generations.add(record('team-a', NOW - 1000, '0.25', 100, 50));
    generations.add(record('team-a', NOW - 2000, '0.5', 10, 5));
    generations.add(record('team-a', NOW - 86_400_000, '9', 1, 1)); // yesterday: not today
    generations.add(record('team-b', NOW - 1000, '0.125', 7, 3));
    const ledger = await state.spendLedger();
    await ledger.add('team-a', parseUsd('0.75'), NOW - 1000);
    await ledger.add('team-a', parseUsd('9'), NOW - 86_400_000);
    const usage = await keyUsage(
      [
        catalog([
          { name: 'team-a', requestsPerMinute: null, tokensPerMinute: null, budget: { usd: 50, period: 'month' } },
          { name: 'team-b', requestsPerMinute: 60, tokensPerMinute: null, budget: null },
        ]),
      ],
      state,
      NOW,
    );
    expect(usage).toEqual([
      { name: 'team-a', day: '2026-11-23', today: { requests: 2, tokens: 165, costUsd: 0.75 }, budget: { usd: 50, period: 'month', spentUsd: 9.75 } },
      { name: 'team-b', day: '2026-11-23', today: { requests: 1, tokens: 10, costUsd: 0.125 }, budget: null },
    ]);
  });

  it('asks the rollups and every budgeted key\'s spend at once, so a stalled Redis is waited for once', async () => {
    // Each ask answers only once all four are asked: asked one after another, the first never answers.
    const asked: Array<() => void> = [];
    function together<T>(answer: Promise<T>): Promise<T> {
      return new Promise<T>((resolve) => {
        asked.push(() => void answer.then(resolve));
        if (asked.length === 4) for (const release of asked) release();
      });
    }
    const [ledger, generations] = await Promise.all([state.spendLedger(), state.generationStore()]);
    const slowLedger: SpendLedger = { spent: (...args) => together(ledger.spent(...args)), add: (...args) => ledger.add(...args), flush: () => ledger.flush(), close: () => ledger.close() };
    const slowGenerations: GenerationStore = { rollups: (...args) => together(generations.rollups(...args)), get: (id) => generations.get(id), add: (r) => generations.add(r), flush: () => generations.flush(), close: () => generations.close() };
    const shared: SharedState = {
      mode: 'redis',
      rateLimiter: (options) => state.rateLimiter(options),
      rateWindows: () => state.rateWindows(),
      carryRateWindows: (carried) => state.carryRateWindows(carried),
      spendLedger: () => Promise.resolve(slowLedger),
      generationStore: () => Promise.resolve(slowGenerations),
      drainStore: (parse) => state.drainStore(parse),
      decisionStore: (options) => state.decisionStore(options),
      setRetention: (retentionMs) => state.setRetention(retentionMs),
      close: () => state.close(),
    };
    await ledger.add('b', parseUsd('2'), NOW);
    const keys = ['a', 'b', 'c'].map((name) => ({ name, requestsPerMinute: null, tokensPerMinute: null, budget: { usd: 10, period: 'day' as const } }));
    const usage = await keyUsage([catalog(keys)], shared, NOW);
    expect(usage.map((u) => u.budget?.spentUsd)).toEqual([0, 2, 0]);
  });

  it('lists a key shared by two gateways under one name once', async () => {
    const shared = { name: 'shared', requestsPerMinute: null, tokensPerMinute: null, budget: null };
    const usage = await keyUsage([catalog([shared]), catalog([shared, { ...shared, name: 'own' }])], state, NOW);
    expect(usage.map((u) => u.name)).toEqual(['shared', 'own']);
  });

  it('opens no usage store without a gateway', async () => {
    expect(await keyUsage([], state, NOW)).toEqual([]);
    expect(await keyUsage([catalog([{ name: 'k', requestsPerMinute: null, tokensPerMinute: null, budget: null }])], undefined, NOW)).toEqual([]);
  });
});
