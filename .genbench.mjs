import { LocalGenerationStore } from '/work/wt/perf/dist/src/cluster/generation-store.js';
import { newGenerationId } from '/work/wt/perf/dist/src/usage/generation-id.js';
import { mkdtempSync } from 'node:fs';
import pino from '/work/wt/perf/node_modules/pino/pino.js';
const dir = mkdtempSync('/tmp/genb-');
const store = await LocalGenerationStore.open({ directory: dir, retentionMs: 30 * 86400000, logger: pino({ level: 'warn' }) });
function rec() { const t = Date.now(); return { id: newGenerationId(t), createdAt: t, key: 'bench', model: 'fake/bench-model', provider: 'fake', streamed: false, status: 200, finishReason: 'stop', latencyMs: 3, generationMs: 3, tokens: { input: 120, output: 30, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, cost: 123456789n }; }
const recs = Array.from({ length: 1000 }, rec);
for (let round = 0; round < 6; round++) {
  const t0 = process.cpuUsage(); const w0 = performance.now();
  for (let i = 0; i < 100_000; i++) { store.add(recs[i % 1000]); if (i % 1600 === 1599) await store.flush(); }
  await store.flush();
  const c = process.cpuUsage(t0);
  console.log(`add+flush: ${((c.user + c.system) / 100_000).toFixed(2)} µs cpu/record, wall ${((performance.now() - w0) * 10 / 1000).toFixed(2)} µs`);
}
await store.close();
