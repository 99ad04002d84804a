// The debug exporter's three verbosities, read back from the log lines it
// writes through the daemon's logger.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../../src/components.js';
import { parseConfigText } from '../../../src/config/load.js';
import { createLogger } from '../../../src/core/logger.js';
import { createDebugExporter } from '../../../src/exporters/debug/exporter.js';
import type { DebugConfig } from '../../../src/exporters/debug/config.js';
import { TraceBatch } from '../../../src/otlp/batch.js';
import { decodeRequest, encodeRequest } from '../../../src/otlp/proto-codec.js';
import { concatRequests } from '../../../src/otlp/wire.js';
import { Service } from '../../../src/service.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { freePort } from '../../helpers/daemon.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { turnsDuring } from '../../helpers/turns.js';

interface Line {
  readonly msg: string;
  readonly exporter: string;
  readonly [key: string]: unknown;
}

/** A logger whose lines are pushed, parsed, onto `lines`. */
function loggerInto(lines: Line[]) {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text !== '') lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return createLogger({ destination });
}

/** Runs one batch through a debug exporter; resolves with the lines it logged. */
async function logged(verbosity: DebugConfig['verbosity'], bytes: Uint8Array): Promise<Line[]> {
  const lines: Line[] = [];
  // Bound as the pipeline graph binds every component's logger.
  const logger = loggerInto(lines).child({ kind: 'exporter', component: 'debug' });
  const telemetry = new Telemetry({ defaultMetrics: false });
  const exporter = createDebugExporter({ id: 'debug', logger, telemetry, storageDirectory: '/nonexistent', version: '0.0.0-test' }, { verbosity });
  await exporter.consume(TraceBatch.fromProto(bytes));
  return lines;
}

const BYTES = ProtobufTraceSerializer.serializeRequest(makeSdkSpans())!;

describe('debug exporter', () => {
  it('basic: one line of counts per batch', async () => {
    const lines = await logged('basic', concatRequests([BYTES, BYTES]));
    expect(lines).toEqual([expect.objectContaining({ msg: 'traces', exporter: 'debug', resourceSpans: 2, spans: 4 })]);
  });

  it('normal: one line per span with its ids, name and kind, beside the component\'s own kind', async () => {
    const model = decodeRequest(BYTES);
    const spans = model.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    const lines = await logged('normal', BYTES);
    expect(lines.map(({ msg, kind, traceId, spanId, name, spanKind }) => ({ msg, kind, traceId, spanId, name, spanKind }))).toEqual(
      spans.map((s) => ({ msg: 'span', kind: 'exporter', traceId: s.traceId, spanId: s.spanId, name: s.name, spanKind: s.kind })),
    );
  });

  it('detailed: one line per span with every field, its resource and its scope', async () => {
    const model = decodeRequest(BYTES);
    const rs = model.resourceSpans[0]!;
    const ss = rs.scopeSpans[0]!;
    const lines = await logged('detailed', BYTES);
    expect(lines).toHaveLength(ss.spans.length);
    ss.spans.forEach((span, i) => {
      expect(lines[i]).toMatchObject({ msg: 'span', resource: rs.resource, scope: { name: 'test-scope', version: '1.2.3' }, span });
    });
  });

  it('detailed: spells doubles JSON has no number for as OTLP/JSON does, not as null, and keeps the sign of -0', async () => {
    const double = (key: string, value: number) => ({ key, value: { doubleValue: value } });
    const bytes = encodeRequest({
      resourceSpans: [
        {
          resource: { attributes: [double('resource.nan', NaN)] },
          scopeSpans: [
            {
              scope: { name: 'scope', attributes: [double('scope.inf', Infinity)] },
              spans: [
                {
                  traceId: '01'.repeat(16),
                  spanId: '02'.repeat(8),
                  name: 'doubles',
                  kind: 1,
                  startTimeUnixNano: '1',
                  endTimeUnixNano: '2',
                  attributes: [double('finite', 1.5), double('zero', -0), { key: 'list', value: { arrayValue: { values: [{ doubleValue: -Infinity }] } } }],
                  events: [{ timeUnixNano: '1', name: 'event', attributes: [double('event.nan', NaN)] }],
                },
              ],
            },
          ],
        },
      ],
    });
    const [line] = await logged('detailed', bytes);
    expect(line).toMatchObject({
      resource: { attributes: [{ key: 'resource.nan', value: { doubleValue: 'NaN' } }] },
      scope: { attributes: [{ key: 'scope.inf', value: { doubleValue: 'Infinity' } }] },
      span: {
        attributes: [
          { key: 'finite', value: { doubleValue: 1.5 } },
          // A logger writes -0 as 0: its sign survives as the string OTLP/JSON also accepts.
          { key: 'zero', value: { doubleValue: '-0' } },
          { key: 'list', value: { arrayValue: { values: [{ doubleValue: '-Infinity' }] } } },
        ],
        events: [{ attributes: [{ key: 'event.nan', value: { doubleValue: 'NaN' } }] }],
      },
    });
  });

  it('gives the event loop turns while it logs a large batch span by span', async () => {
    const bytes = concatRequests(Array.from({ length: 2_000 }, () => BYTES));
    const { value: lines, turns } = await turnsDuring(() => logged('detailed', bytes));
    expect(lines).toHaveLength(4_000);
    // 4,000 detailed lines take well over one 0.5 ms slice on any machine.
    expect(turns).toBeGreaterThan(1);
  });
});

// One span (trace id 01.., span id 02..) named "f", 0xff, "g": not UTF-8.
const NOT_UTF8 = Buffer.from('0a25122312210a1001010101010101010101010101010101120802020202020202022a0366ff67', 'hex');

describe('debug exporter in a pipeline', () => {
  let service: Service | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await service?.shutdown();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  for (const verbosity of ['normal', 'detailed'] as const) {
    it(`${verbosity}: logs a string that is not UTF-8 with U+FFFD and acknowledges what the file exporter wrote`, async () => {
      dir = await mkdtemp(join(tmpdir(), 'sluice-debug-'));
      const port = await freePort();
      const lines: Line[] = [];
      service = new Service({ logger: loggerInto(lines), version: '0.0.0-test', telemetry: new Telemetry({ defaultMetrics: false }) });
      const text = `
receivers: { otlp: { protocols: { http: { endpoint: "127.0.0.1:${port}" } } } }
exporters:
  debug: { verbosity: ${verbosity} }
  file: { path: "${join(dir, 'traces.jsonl')}" }
service:
  storage: { directory: "${dir}" }
  admin: { endpoint: "127.0.0.1:0" }
  pipelines: { traces: { receivers: [otlp], exporters: [debug, file] } }
`;
      await service.start(parseConfigText(text, { registry: builtinRegistry(), env: {} }));
      const answer = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: NOT_UTF8,
      });
      expect(answer.status).toBe(200);
      const written = JSON.parse(await readFile(join(dir, 'traces.jsonl'), 'utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }> };
      expect(written.resourceSpans[0]?.scopeSpans[0]?.spans[0]?.name).toBe('f\uFFFDg');
      const span = lines.find((line) => line.msg === 'span' && line.exporter === 'debug');
      const name = verbosity === 'normal' ? span?.['name'] : (span?.['span'] as { name?: string } | undefined)?.name;
      expect(name).toBe('f\uFFFDg');
    });
  }
});
