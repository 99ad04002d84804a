// Issue 10's gateway maximum: closed-loop requests/s with the realistic
// request (system prompt, tools, max_tokens, temperature) and spans on,
// once per exporter the spans go to (otlphttp, file, debug, drains), beside
// the bare Node relay in the same run. Each process under test is pinned to
// one core; the load generator, the fake upstream and the sink share the other.
import { log, maximum, type MaximumOptions, type MaximumRow } from './lib/gateway-maximum.js';
import { gatewayReceiverYaml, MODEL, realisticChatBody, startPassthrough, startSluiceWith, startUpstream, type Running } from './lib/gateway-targets.js';
import { pinSelf, table, writeSection } from './lib/results.js';
import { startSink } from './lib/sink.js';
import { writeProfileSection } from './lib/gateway-profile.js';

const GATEWAY_CORE = 1;
const LOAD_CORE = 0;
const UPSTREAM_PORT = 18_841;
const RELAY_PORT = 18_842;
const SLUICE_PORT = 18_843;
const SLUICE_ADMIN_PORT = 18_844;
const CONNECTIONS = 64;
const WARMUP_MS = 5_000;
const MAX_MS = 10_000;
const USAGE_MARGIN_MS = 500;
const TARGET_PER_SECOND = 10_000;

/** The exporters the gateway's spans go to, one Sluice run each. */
const EXPORTERS: Record<string, (sinkUrl: string, dir: string) => string> = {
  otlphttp: (sinkUrl) => `otlphttp: { endpoint: "${sinkUrl}", encoding: protobuf, compression: gzip }`,
  file: (_sinkUrl, dir) => `file: { path: ${dir}/traces.jsonl }`,
  debug: () => 'debug: { verbosity: basic }',
  drains: () => 'drains: {}',
};

function sluiceYaml(exporter: string, sinkUrl: string, dir: string): string {
  const make = EXPORTERS[exporter];
  if (make === undefined) throw new Error(`unknown exporter ${exporter}`);
  const drains = exporter === 'drains' ? `drains:\n  - { name: sink, url: "${sinkUrl}", insecure: true, format: json, compression: gzip }\n` : '';
  return `
receivers:
${gatewayReceiverYaml(SLUICE_PORT, UPSTREAM_PORT, 'production')}
processors:
  resource:
    attributes: { platform.projectId: prj_bench, platform.deploymentId: dpl_bench }
exporters:
  ${make(sinkUrl, dir)}
${drains}service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${SLUICE_ADMIN_PORT} }
  telemetry: { logs: { level: info } }
  pipelines:
    traces: { receivers: [gateway], processors: [resource], exporters: [${exporter}] }
`;
}

type Row = MaximumRow;

// `node dist/bench/gateway-max.js --only=file`: one exporter, no relay, figures
// printed and RESULTS.md left alone. `--cpu-prof`: no relay, Sluice under
// --cpu-prof with one exporter (`drains`, the dearest, unless --only names
// another), where its time goes written to its own section
// (gateway-max-profile); KEEP_PROFILE=1 keeps the .cpuprofile.
const PROFILE = process.argv.includes('--cpu-prof');
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? (PROFILE ? 'drains' : undefined);
const PROFILE_FRAMES = 15;

const MAXIMUM: MaximumOptions = { connections: CONNECTIONS, warmupMs: WARMUP_MS, maxMs: MAX_MS, usageMarginMs: USAGE_MARGIN_MS };

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const upstream = await startUpstream(UPSTREAM_PORT, LOAD_CORE);
  const sink = await startSink();
  const ownPids = [process.pid, upstream.pid];
  const rows: Row[] = [];
  try {
    if (ONLY === undefined) {
      const relay = await startPassthrough(RELAY_PORT, UPSTREAM_PORT, GATEWAY_CORE);
      try {
        rows.push(await maximum(relay, realisticChatBody('bench-model', false), ownPids, MAXIMUM));
      } finally {
        await relay.stop();
      }
    }
    for (const exporter of Object.keys(EXPORTERS).filter((e) => ONLY === undefined || e === ONLY)) {
      const measureExporter = async (profileDir?: string): Promise<Row> => {
        const options = { port: SLUICE_PORT, adminPort: SLUICE_ADMIN_PORT, core: GATEWAY_CORE };
        const sluice = await startSluiceWith((dir) => sluiceYaml(exporter, sink.url, dir), profileDir === undefined ? options : { ...options, profileDir });
        try {
          const row = await maximum(sluice, realisticChatBody(MODEL, false), ownPids, MAXIMUM);
          rows.push({ ...row, name: `sluice, spans to ${exporter}` });
          return row;
        } finally {
          await sluice.stop();
        }
      };
      if (!PROFILE) {
        await measureExporter();
        continue;
      }
      await writeProfileSection('gateway-max', "Gateway maximum: where Sluice's time goes (issue 10)", PROFILE_FRAMES, async (profileDir) => {
        const row = await measureExporter(profileDir);
        return {
          threads: row.threads,
          intro: `The gateway-max scenario above, Sluice alone with spans to \`${exporter}\`, under \`node --cpu-prof\` (\`node dist/bench/gateway-max.js --cpu-prof${exporter === 'drains' ? '' : ` --only=${exporter}`}\`), which costs it some CPU; measured in that run: ${Math.round(row.perSecond).toLocaleString('en-US')} req/s at ${row.cpuPercent.toFixed(0)}% of the core, ${((row.cpuPercent / 100) * 1e6 / row.perSecond).toFixed(0)} µs of CPU per request.`,
        };
      });
    }
  } finally {
    await sink.close();
    await upstream.stop();
  }
  const count = (v: number): string => Math.round(v).toLocaleString('en-US');
  if (ONLY !== undefined) {
    for (const r of rows) log(`${r.name}: ${count(r.perSecond)} req/s, ${r.cpuPercent.toFixed(0)}% CPU, ${((r.cpuPercent / 100) * 1e6 / r.perSecond).toFixed(0)} µs/request, others ${r.others.toFixed(0)}%`);
    return;
  }
  const perRequest = (r: Row): string => ((r.cpuPercent / 100) * 1e6 / r.perSecond).toFixed(0);
  const sluiceRows = rows.filter((r) => r.name.startsWith('sluice'));
  const worst = Math.min(...sluiceRows.map((r) => r.perSecond));
  writeSection(
    'gateway-max',
    'Gateway maximum with the realistic request, per exporter (issue 10)',
    `Closed loop, ${CONNECTIONS} keep-alive connections, ${MAX_MS / 1000} s after ${WARMUP_MS / 1000} s of warm-up; gateway pinned to core ${GATEWAY_CORE}, the load generator, fake upstream and sink on core ${LOAD_CORE}. The request: a system prompt, three conversation turns, two function tools with JSON Schema parameters, \`tool_choice: auto\`, \`max_tokens\`, \`temperature\` (\`bench/lib/gateway-targets.ts\`, \`realisticChatBody\`). Sluice runs the \`gateway\` receiver -> \`resource\` -> one exporter, spans on (a SERVER and a CLIENT span per request): \`otlphttp\` (protobuf, gzip, disk queue, to the sink), \`file\` (OTLP/JSON lines), \`debug\` (\`verbosity: basic\`, logs at info) or \`drains\` (one drain, JSON, gzip, to the sink). The bare relay forwards bytes unparsed (no auth, validation or spans).

${table(
  ['path', 'max req/s', 'errors', 'CPU % of one core', 'CPU µs per request', "others' CPU %"],
  rows.map((r) => [r.name, count(r.perSecond), r.failed, r.cpuPercent.toFixed(0), perRequest(r), r.others.toFixed(0)]),
)}

Target (issue 10): at least ${count(TARGET_PER_SECOND)} req/s with any exporter: ${worst >= TARGET_PER_SECOND ? 'met' : `**missed**, worst ${count(worst)} req/s`}. *Others' CPU* is what processes outside the benchmark used meanwhile, in % of one core: where it is high, the maxima are pessimistic.`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
