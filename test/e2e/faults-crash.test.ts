// Issue 4 fault tests, daemon side: killed with SIGKILL mid-stream, a segment
// file torn in the middle of a record, and SIGTERM while deliveries are in
// flight. What the daemon acknowledged must reach the destination after the
// next start.
import { readdir, readFile, readlink, symlink, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { queueDirectory } from '../../src/exporters/exporterhelper/index.js';
import { decodeFrame, FRAME_OVERHEAD_BYTES } from '../../src/queue/framing.js';
import { startDaemon, waitUntil, type RunningDaemon } from '../helpers/daemon.js';
import { startOtlpSink, type OtlpSink } from '../helpers/otlp-sink.js';
import { EXPORTER, faultConfig, makeRequests, otlpEndpoint, receivedSpanIds, sendAll, spanIdsOf, startFaultDaemon, waitForSpanIds, type FaultDaemonOptions } from './faults-kit.js';

const KILL_AFTER_ACKED_SPANS = 20_000;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function sinkAnswering(status: number): Promise<OtlpSink> {
  const sink = await startOtlpSink({ tls: false });
  sink.respond = () => ({ status });
  cleanups.push(() => sink.close());
  return sink;
}

async function start(options: FaultDaemonOptions): Promise<RunningDaemon> {
  const daemon = await startFaultDaemon(options);
  cleanups.push(() => daemon.cleanup());
  return daemon;
}

/** The sink's queue segments of a daemon's storage, oldest first. */
async function segmentPaths(daemon: RunningDaemon): Promise<string[]> {
  const directory = queueDirectory(join(daemon.dir, 'data'), EXPORTER);
  return (await readdir(directory)).filter((name) => name.endsWith('.seg')).sort().map((name) => join(directory, name));
}

describe('faults in the daemon', () => {
  it('delivers every acknowledged span after a SIGKILL while 50,000 spans arrive and the destination is down', { timeout: 60_000 }, async () => {
    const sink = await sinkAnswering(503);
    const otlp = await otlpEndpoint();
    const options = { sinkUrl: sink.url, otlpPort: otlp.port };
    const first = await start(options);
    const requests = makeRequests(500, 100);
    let killing: Promise<unknown> | undefined;
    const acked = await sendAll(otlp.url, requests, 8, {
      stop: () => first.child.exitCode !== null || first.child.signalCode !== null,
      onAck(sofar) {
        if (killing === undefined && sofar.length * 100 >= KILL_AFTER_ACKED_SPANS) killing = first.stop('SIGKILL');
      },
    });
    await killing;
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(acked.length * 100).toBeGreaterThanOrEqual(KILL_AFTER_ACKED_SPANS);
    expect(acked.length).toBeLessThan(requests.length);

    sink.respond = () => ({ status: 200 });
    await start({ ...options, dir: first.dir });
    const ackedIds = spanIdsOf(acked);
    await waitForSpanIds(sink, ackedIds, 30_000);
    const received = new Set(receivedSpanIds(sink));
    console.log(`faults: ${acked.length * 100} spans acknowledged before SIGKILL, ${received.size} unique delivered after restart`);
    expect(ackedIds.every((id) => received.has(id))).toBe(true);
  });

  it('starts after a SIGKILL once the killed daemon\'s pid belongs to another live process', { timeout: 30_000 }, async () => {
    const sink = await sinkAnswering(503);
    const otlp = await otlpEndpoint();
    const options = { sinkUrl: sink.url, otlpPort: otlp.port };
    const first = await start(options);
    const requests = makeRequests(5, 10);
    expect((await sendAll(otlp.url, requests, 1)).length).toBe(5);
    await first.stop('SIGKILL');

    // Pids are reused (pid_max may be 32768; a restarted container numbers from 1 again): give each lock's pid to a live process, this one.
    const locks = (await readdir(first.dir, { recursive: true })).filter((name) => name === 'lock' || name.endsWith('/lock'));
    expect(locks.length).toBeGreaterThan(1); // the storage directory's and the queue's
    for (const lock of locks) {
      const path = join(first.dir, lock);
      const [pid, ...rest] = (await readlink(path)).split(':');
      expect(pid).toBe(String(first.child.pid));
      await unlink(path);
      await symlink([String(process.pid), ...rest].join(':'), path);
    }

    sink.respond = () => ({ status: 200 });
    await start({ ...options, dir: first.dir });
    await waitForSpanIds(sink, spanIdsOf(requests), 15_000);
  });

  it('starts on a segment torn in the middle of a record and delivers every whole record before it', { timeout: 30_000 }, async () => {
    const sink = await sinkAnswering(503);
    const otlp = await otlpEndpoint();
    const options = { sinkUrl: sink.url, otlpPort: otlp.port };
    const first = await start(options);
    const requests = makeRequests(10, 20);
    expect((await sendAll(otlp.url, requests, 1)).length).toBe(10); // one at a time: one record each, in order
    expect(await first.stop()).toBe(0);

    const [segment, ...others] = await segmentPaths(first);
    expect(segment).toBeDefined();
    expect(others).toEqual([]);
    const bytes = await readFile(segment ?? '');
    let lastFrameAt = 0;
    for (let pos = 0; pos < bytes.length; ) {
      const result = decodeFrame(bytes, pos);
      if (result.kind !== 'frame') throw new Error(`unexpected ${result.kind} frame in a clean segment`);
      lastFrameAt = pos;
      pos += result.frame.frameBytes;
    }
    await truncate(segment ?? '', lastFrameAt + Math.floor((bytes.length - lastFrameAt) / 2));

    sink.respond = () => ({ status: 200 });
    const second = await start({ ...options, dir: first.dir });
    const whole = spanIdsOf(requests.slice(0, 9));
    await waitForSpanIds(sink, whole, 15_000);
    expect(new Set(receivedSpanIds(sink))).toEqual(new Set(whole));
    expect(second.logs.some((line) => line.includes('torn or corrupt record'))).toBe(true);
  });

  it('starts on a segment with a damaged record in the middle and delivers every record around it', { timeout: 30_000 }, async () => {
    const sink = await sinkAnswering(503);
    const otlp = await otlpEndpoint();
    const options = { sinkUrl: sink.url, otlpPort: otlp.port };
    const first = await start(options);
    const requests = makeRequests(10, 20);
    expect((await sendAll(otlp.url, requests, 1)).length).toBe(10); // one at a time: one record each, in order
    expect(await first.stop()).toBe(0);

    const [segment] = await segmentPaths(first);
    const bytes = await readFile(segment ?? '');
    const frameStarts: number[] = [];
    for (let pos = 0; pos < bytes.length; ) {
      const result = decodeFrame(bytes, pos);
      if (result.kind !== 'frame') throw new Error(`unexpected ${result.kind} frame in a clean segment`);
      frameStarts.push(pos);
      pos += result.frame.frameBytes;
    }
    const damaged = (frameStarts[4] ?? 0) + FRAME_OVERHEAD_BYTES + 5; // a data byte of the fifth record; its length stays intact
    bytes[damaged] = 0xff ^ (bytes[damaged] ?? 0);
    await writeFile(segment ?? '', bytes);

    sink.respond = () => ({ status: 200 });
    const second = await start({ ...options, dir: first.dir });
    const intact = spanIdsOf([...requests.slice(0, 4), ...requests.slice(5)]);
    await waitForSpanIds(sink, intact, 15_000);
    expect(new Set(receivedSpanIds(sink))).toEqual(new Set(intact));
    expect(second.logs.some((line) => line.includes('"lostRecords":1'))).toBe(true);
  });

  it('delivers the rest on the next start after a SIGTERM during delivery', { timeout: 30_000 }, async () => {
    const sink = await startOtlpSink({ tls: false });
    cleanups.push(() => sink.close());
    sink.respond = (_req, index) => (index < 2 ? { status: 200 } : 'hang');
    const otlp = await otlpEndpoint();
    const options = { sinkUrl: sink.url, otlpPort: otlp.port, exporterYaml: '    sending_queue: { max_batch_spans: 20, flush_timeout: 0ms }' };
    const first = await start(options);
    const requests = makeRequests(30, 20);
    expect((await sendAll(otlp.url, requests, 2)).length).toBe(30);
    await sink.waitForSpans(40, 10_000);
    expect(await first.stop('SIGTERM')).toBe(0);
    const deliveredBefore = new Set(receivedSpanIds(sink)).size;
    expect(deliveredBefore).toBeLessThan(600);

    sink.respond = () => ({ status: 200 });
    await start({ ...options, dir: first.dir });
    await waitForSpanIds(sink, spanIdsOf(requests), 15_000);
    console.log(`faults: ${deliveredBefore} spans delivered before SIGTERM, the rest of 600 after the restart`);
  });

  it('warns at start of the undelivered queue of an exporter renamed out of the config, naming it', { timeout: 30_000 }, async () => {
    const sink = await sinkAnswering(503);
    const otlp = await otlpEndpoint();
    const first = await start({ sinkUrl: sink.url, otlpPort: otlp.port });
    expect((await sendAll(otlp.url, makeRequests(5, 10), 1)).length).toBe(5);
    expect(await first.stop('SIGTERM')).toBe(0);

    const renamed = startDaemon(({ adminPort }) => faultConfig({ sinkUrl: sink.url, otlpPort: otlp.port })({ dir: first.dir, adminPort }).replaceAll(EXPORTER, 'otlphttp/renamed'), { dir: first.dir });
    const second = await renamed;
    cleanups.push(() => second.cleanup());
    await waitUntil(() => second.logs.some((line) => line.includes('no longer configured')), 10_000, 'the warning');
    const warning = JSON.parse(second.logs.find((line) => line.includes('no longer configured')) ?? '{}') as { exporter?: string; bytes?: number };
    expect(warning.exporter).toBe(EXPORTER);
    expect(warning.bytes).toBeGreaterThan(0);
    expect(second.logs.some((line) => line.includes('no longer configured') && line.includes('otlphttp/renamed'))).toBe(false);
  });
});
