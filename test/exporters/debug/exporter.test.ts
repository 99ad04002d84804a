// The debug exporter's three verbosities, read back from the log lines it
// writes through the daemon's logger.
import { Writable } from 'node:stream';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/core/logger.js';
import { createDebugExporter } from '../../../src/exporters/debug/exporter.js';
import type { DebugConfig } from '../../../src/exporters/debug/config.js';
import { TraceBatch } from '../../../src/otlp/batch.js';
import { decodeRequest } from '../../../src/otlp/proto-codec.js';
import { concatRequests } from '../../../src/otlp/wire.js';
import { Telemetry } from '../../../src/shared/telemetry.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { turnsDuring } from '../../helpers/turns.js';

interface Line {
  readonly msg: string;
  readonly exporter: string;
  readonly [key: string]: unknown;
}

/** Runs one batch through a debug exporter; resolves with the lines it logged. */
async function logged(verbosity: DebugConfig['verbosity'], bytes: Uint8Array): Promise<Line[]> {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text !== '') lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  const logger = createLogger({ destination });
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

  it('normal: one line per span with its ids, name and kind', async () => {
    const model = decodeRequest(BYTES);
    const spans = model.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    const lines = await logged('normal', BYTES);
    expect(lines.map(({ msg, traceId, spanId, name, kind }) => ({ msg, traceId, spanId, name, kind }))).toEqual(
      spans.map((s) => ({ msg: 'span', traceId: s.traceId, spanId: s.spanId, name: s.name, kind: s.kind })),
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

  it('gives the event loop turns while it logs a large batch span by span', async () => {
    const bytes = concatRequests(Array.from({ length: 2_000 }, () => BYTES));
    const { value: lines, turns } = await turnsDuring(() => logged('detailed', bytes));
    expect(lines).toHaveLength(4_000);
    // 4,000 detailed lines take well over one 0.5 ms slice on any machine.
    expect(turns).toBeGreaterThan(1);
  });
});
