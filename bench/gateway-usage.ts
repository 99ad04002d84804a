// Issue 14's costs: (1) what usage accounting adds to the gateway's hot path,
// as the maximum of the realistic request with spans to `debug`, for a bare
// key on an unpriced model (generation record only) and for a key with
// requests and tokens per minute and a budget on a priced model (record,
// cost, spend, limits), beside the bare relay in the same run; (2) the record
// write alone, in process; (3) a 30-day report over a million generations,
// read from daily rollups, and the store's open time over those 30 days.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { LocalGenerationStore } from '../src/cluster/generation-store.js';
import { RecordLog } from '../src/cluster/record-log.js';
import { serializeGeneration, type GenerationRecord } from '../src/shared/generation.js';
import { newGenerationId } from '../src/shared/generation-id.js';
import { parseUsd } from '../src/shared/money.js';
import { addDays, dayOf } from '../src/shared/periods.js';
import { buildReport, parseReportQuery } from '../src/usage/report.js';
import { log, maximum, type MaximumOptions, type MaximumRow } from './lib/gateway-maximum.js';
import { API_KEY, MODEL, realisticChatBody, startPassthrough, startSluiceWith, startUpstream, type Running } from './lib/gateway-targets.js';
import { pinSelf, table, writeSection } from './lib/results.js';

const GATEWAY_CORE = 1;
const LOAD_CORE = 0;
const UPSTREAM_PORT = 18_851;
const RELAY_PORT = 18_852;
const SLUICE_PORT = 18_853;
const SLUICE_ADMIN_PORT = 18_854;
const CONNECTIONS = 64;
const WARMUP_MS = 5_000;
const MAX_MS = 10_000;
const USAGE_MARGIN_MS = 500;
const RECORD_WRITES = 200_000;
const REPORT_DAYS = 30;
const REPORT_PER_DAY = 33_334; // a million over 30 days
const REPORT_RUNS = 20;
const logger = pino({ level: 'silent' });

function sluiceYaml(limited: boolean, dir: string): string {
  const key = limited ? `{ key: ${API_KEY}, name: bench, requests_per_minute: 100000000, tokens_per_minute: 1000000000, budget: { usd: 1000000, period: month } }` : API_KEY;
  const pricing = limited ? '\n        pricing: { input: "0.0000025", output: "0.00001", input_cache_read: "0.00000125" }' : '';
  return `
receivers:
  gateway:
    endpoint: 127.0.0.1:${SLUICE_PORT}
    environment: production
    api_keys: [${key}]
    providers:
      fake: { type: openai, base_url: "http://127.0.0.1:${UPSTREAM_PORT}/v1" }
    models:
      - id: ${MODEL}${pricing}
        endpoints: [{ provider: fake, model: bench-model }]
exporters:
  debug: { verbosity: basic }
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${SLUICE_ADMIN_PORT} }
  telemetry: { logs: { level: warn } }
  pipelines:
    traces: { receivers: [gateway], exporters: [debug] }
`;
}

type Row = MaximumRow;

const MAXIMUM: MaximumOptions = { connections: CONNECTIONS, warmupMs: WARMUP_MS, maxMs: MAX_MS, usageMarginMs: USAGE_MARGIN_MS };

function record(at: number, i: number): GenerationRecord {
  return {
    id: newGenerationId(at),
    createdAt: at,
    key: `key-${i % 20}`,
    model: `provider-${i % 3}/model-${i % 5}`,
    provider: `provider-${i % 3}`,
    streamed: i % 2 === 0,
    status: 200,
    finishReason: 'stop',
    latencyMs: 120,
    generationMs: 900,
    tokens: { input: 1200, output: 300, cacheRead: 800, cacheWrite: 0, reasoning: 0 },
    cost: parseUsd('0.0048'),
  };
}

/** CPU µs per generation record added (serialize, frame, buffer) and written (one fdatasync per flush interval). */
async function recordWrites(): Promise<{ microsPerRecord: number; bytesPerRecord: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-usage-'));
  try {
    const store = await LocalGenerationStore.open({ directory: dir, retentionMs: 30 * 86_400_000, logger });
    const now = Date.now();
    const started = process.cpuUsage();
    for (let i = 0; i < RECORD_WRITES; i++) {
      store.add(record(now, i));
      // Let the flush timer run now and then, as it would between requests.
      if (i % 5_000 === 0) await new Promise((r) => setImmediate(r));
    }
    await store.flush();
    const used = process.cpuUsage(started);
    await store.close();
    const { size } = await stat(join(dir, `${dayOf(now)}.log`));
    return { microsPerRecord: (used.user + used.system) / RECORD_WRITES, bytesPerRecord: size / RECORD_WRITES };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A million generations over 30 days, written as day logs; then the store's opens and a 30-day report. */
async function thirtyDayReport(): Promise<{ firstOpenMs: number; openMs: number; reportMs: number; rows: number; requests: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-report-'));
  try {
    const today = dayOf(Date.now());
    const perDay = REPORT_PER_DAY;
    for (let d = REPORT_DAYS - 1; d >= 0; d--) {
      const day = addDays(today, -d);
      const at = Date.parse(`${day}T12:00:00Z`);
      const log = new RecordLog(join(dir, `${day}.log`), logger);
      for (let i = 0; i < perDay; i++) log.append(Buffer.from(serializeGeneration(record(at, i))), at);
      await log.close();
    }
    let started = performance.now();
    const first = await LocalGenerationStore.open({ directory: dir, retentionMs: 31 * 86_400_000, logger });
    const firstOpenMs = performance.now() - started;
    await first.close();
    started = performance.now();
    const store = await LocalGenerationStore.open({ directory: dir, retentionMs: 31 * 86_400_000, logger });
    const openMs = performance.now() - started;
    const query = parseReportQuery(new URLSearchParams({ start_date: addDays(today, -(REPORT_DAYS - 1)), end_date: today, group_by: 'model' }), undefined);
    let report = buildReport(await store.rollups(query.startDay, query.endDay), query);
    started = performance.now();
    for (let i = 0; i < REPORT_RUNS; i++) report = buildReport(await store.rollups(query.startDay, query.endDay), query);
    const reportMs = (performance.now() - started) / REPORT_RUNS;
    await store.close();
    return { firstOpenMs, openMs, reportMs, rows: report.results.length, requests: report.results.reduce((n, r) => n + r.request_count, 0) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  log('record writes, in process');
  const writes = await recordWrites();
  log(`30-day report over ${(REPORT_PER_DAY * REPORT_DAYS).toLocaleString('en-US')} generations`);
  const report = await thirtyDayReport();
  pinSelf(LOAD_CORE);
  const upstream = await startUpstream(UPSTREAM_PORT, LOAD_CORE);
  const ownPids = [process.pid, upstream.pid];
  const rows: Row[] = [];
  try {
    const relay = await startPassthrough(RELAY_PORT, UPSTREAM_PORT, GATEWAY_CORE);
    try {
      rows.push(await maximum(relay, realisticChatBody('bench-model', false), ownPids, MAXIMUM));
    } finally {
      await relay.stop();
    }
    for (const limited of [false, true]) {
      const sluice = await startSluiceWith((dir) => sluiceYaml(limited, dir), { port: SLUICE_PORT, adminPort: SLUICE_ADMIN_PORT, core: GATEWAY_CORE });
      try {
        const row = await maximum(sluice, realisticChatBody(MODEL, false), ownPids, MAXIMUM);
        rows.push({ ...row, name: limited ? 'sluice, priced model, key with rpm + tpm + budget' : 'sluice, unpriced model, bare key' });
      } finally {
        await sluice.stop();
      }
    }
  } finally {
    await upstream.stop();
  }
  const count = (v: number): string => Math.round(v).toLocaleString('en-US');
  const perRequest = (r: Row): string => ((r.cpuPercent / 100) * 1e6 / r.perSecond).toFixed(0);
  writeSection(
    'gateway-usage',
    'Usage accounting on the gateway hot path, and reports (issue 14)',
    `Closed loop, ${CONNECTIONS} keep-alive connections, ${MAX_MS / 1000} s after ${WARMUP_MS / 1000} s of warm-up, the realistic request (\`realisticChatBody\`), spans to \`debug\` (\`verbosity: basic\`); gateway pinned to core ${GATEWAY_CORE}, load generator and fake upstream on core ${LOAD_CORE}. Every Sluice request is metered: a generation id, a generation record (buffered, written with one fdatasync per 200 ms), token metrics. The priced run adds the cost (answer, span, metrics), the spend ledger, and the requests-, tokens-per-minute and budget checks. The first Sluice row is the previous hot path plus the generation record (every request is metered now); the record's own share is measured in process below.

${table(
  ['path', 'max req/s', 'errors', 'CPU % of one core', 'CPU µs per request', "others' CPU %"],
  rows.map((r) => [r.name, count(r.perSecond), r.failed, r.cpuPercent.toFixed(0), perRequest(r), r.others.toFixed(0)]),
)}

The record write alone, in process (${count(RECORD_WRITES)} records of a 20-key, 5-model mix): **${writes.microsPerRecord.toFixed(1)} µs of CPU per record** (JSON, CRC32 frame, buffered append, its share of the group-committed write and fdatasync), ${Math.round(writes.bytesPerRecord)} bytes per record on disk.

A ${REPORT_DAYS}-day report over ${count(report.requests)} generations (${count(REPORT_PER_DAY)} a day, 20 keys × 5 models × 3 providers) grouped by model, from the daily rollups: **${report.reportMs.toFixed(2)} ms** (mean of ${REPORT_RUNS}; ${report.rows} rows). Opening the store the first time, which reads each finished day's log once and saves its rollups: ${(report.firstOpenMs / 1000).toFixed(1)} s; every later open, from the saved rollups: ${report.openMs.toFixed(0)} ms. *Others' CPU* is what processes outside the benchmark used meanwhile, in % of one core (other work on this shared machine): where it is high, the maxima are pessimistic and the rows compare with each other, not with runs on a quiet machine.`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
