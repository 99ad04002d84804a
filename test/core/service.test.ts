import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { ConfigError, PermanentError } from '../../src/shared/errors.js';
import { Service } from '../../src/service.js';
import { Telemetry } from '../../src/shared/telemetry.js';
import { createRecorder, fakeBatch, fakeRegistry, type Recorder } from './fakes.js';
import { waitUntil } from '../helpers/daemon.js';

let directory: string;
let recorder: Recorder;
let service: Service;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'sluice-service-'));
  recorder = createRecorder();
  service = new Service({ logger: pino({ level: 'silent' }), version: 'test', telemetry: new Telemetry({ defaultMetrics: false }) });
});

afterEach(async () => {
  await service.shutdown();
  rmSync(directory, { recursive: true, force: true });
});

function config(body: string) {
  const text = `${body}\nservice:\n  storage: { directory: "${join(directory, 'data')}" }\n  admin: { endpoint: "127.0.0.1:0" }\n  pipelines:\n${PIPELINES}`;
  return parseConfigText(text, { registry: fakeRegistry(recorder), env: {} });
}

let PIPELINES = '';

function next(id: string) {
  const consumer = recorder.receivers.get(id);
  if (consumer === undefined) throw new Error(`no receiver ${id}`);
  return consumer;
}

describe('service', () => {
  it('fans a receiver out to two pipelines and settles only after both accepted', async () => {
    PIPELINES = '    traces/a: { receivers: [fakein], exporters: [fakeout/fast] }\n    traces/b: { receivers: [fakein], exporters: [fakeout/slow] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout/fast: {}, fakeout/slow: { delay_ms: 50 } }'));
    await next('fakein').consume(fakeBatch(3, 'b1'));
    expect(recorder.exported.get('fakeout/fast')?.length).toBe(1);
    expect(recorder.exported.get('fakeout/slow')?.length).toBe(1);
  });

  it('runs processors in pipeline order before the exporter', async () => {
    PIPELINES = '    traces: { receivers: [fakein], processors: [fakeproc/two, fakeproc/one], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nprocessors: { fakeproc/one: { tag: one }, fakeproc/two: { tag: two } }\nexporters: { fakeout: {} }'));
    await next('fakein').consume(fakeBatch(1, 'in'));
    expect(recorder.events.filter((event) => !event.startsWith('start'))).toEqual(['process fakeproc/two', 'process fakeproc/one', 'export fakeout in+two+one']);
  });

  it('stops the chain when a processor returns null', async () => {
    PIPELINES = '    traces: { receivers: [fakein], processors: [fakeproc], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nprocessors: { fakeproc: { drop: true } }\nexporters: { fakeout: {} }'));
    await next('fakein').consume(fakeBatch(1));
    expect(recorder.exported.size).toBe(0);
  });

  it('rejects the receiver consume when one exporter rejects', async () => {
    PIPELINES = '    traces/a: { receivers: [fakein], exporters: [fakeout/ok] }\n    traces/b: { receivers: [fakein], exporters: [fakeout/bad] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout/ok: {}, fakeout/bad: { reject: permanent } }'));
    await expect(next('fakein').consume(fakeBatch(1))).rejects.toBeInstanceOf(PermanentError);
    expect(recorder.exported.get('fakeout/ok')?.length).toBe(1);
  });

  it('prefers a retryable error over a permanent one so the sender retries', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout/perm, fakeout/later] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout/perm: { reject: permanent }, fakeout/later: { reject: retryable } }'));
    await expect(next('fakein').consume(fakeBatch(1))).rejects.toThrow('fakeout/later unavailable');
  });

  it('starts exporters, then processors, then receivers, and stops in reverse', async () => {
    PIPELINES = '    traces: { receivers: [fakein], processors: [fakeproc], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nprocessors: { fakeproc: {} }\nexporters: { fakeout: {} }'));
    expect(service.ready).toBe(true);
    await service.shutdown();
    expect(service.ready).toBe(false);
    expect(recorder.events).toEqual([
      'start exporter fakeout',
      'start processor fakeproc',
      'start receiver fakein',
      'shutdown receiver fakein',
      'shutdown processor fakeproc',
      'shutdown exporter fakeout',
    ]);
  });

  it('shuts down once however often it is asked', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout: {} }'));
    await Promise.all([service.shutdown(), service.shutdown()]);
    await service.shutdown();
    expect(recorder.events.filter((event) => event.startsWith('shutdown'))).toHaveLength(2);
  });

  it('shuts down safely before it ever started', async () => {
    await expect(service.shutdown()).resolves.toBeUndefined();
  });

  it('shuts down what started when a component fails to start', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    await expect(service.start(config('receivers: { fakein: { fail_start: true } }\nexporters: { fakeout: {} }'))).rejects.toThrow('receiver fakein failed to start: port in use');
    expect(recorder.events).toContain('shutdown exporter fakeout');
    expect(service.ready).toBe(false);
  });

  it('keeps the running graph when a reload brings an invalid config', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout: {} }'));
    const applied = await service.reload(() => {
      throw new ConfigError(['exporters.fakeout.encoding: must be one of json, protobuf']);
    });
    expect(applied).toBe(false);
    expect(service.ready).toBe(true);
    expect(recorder.events.some((event) => event.startsWith('shutdown'))).toBe(false);
  });

  it('swaps the graph on a valid reload', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout: {} }'));
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout/new] }\n';
    const applied = await service.reload(() => config('receivers: { fakein: {} }\nexporters: { fakeout/new: {} }'));
    expect(applied).toBe(true);
    expect(recorder.events.slice(2)).toEqual(['shutdown receiver fakein', 'shutdown exporter fakeout', 'start exporter fakeout/new', 'start receiver fakein']);
    await next('fakein').consume(fakeBatch(1, 'after'));
    expect(recorder.exported.get('fakeout/new')?.length).toBe(1);
  });

  it('folds reloads asked for while one waits its turn into that one, so a burst of SIGHUPs restarts the graph twice, not once per signal', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout: {} }'));
    let loads = 0;
    let releaseFirst: () => void = () => undefined;
    const firstLoading = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const first = service.reload(async () => {
      loads += 1;
      await firstLoading;
      return config('receivers: { fakein: {} }\nexporters: { fakeout: {} }');
    });
    await waitUntil(() => loads === 1);
    const burst = Array.from({ length: 5 }, () =>
      service.reload(() => {
        loads += 1;
        return config('receivers: { fakein: {} }\nexporters: { fakeout: {} }');
      }),
    );
    releaseFirst();
    expect(await Promise.all([first, ...burst])).toEqual([true, true, true, true, true, true]);
    expect(loads).toBe(2);
    expect(recorder.events.filter((event) => event === 'start receiver fakein')).toHaveLength(3);
  });

  it('restores the previous graph when the new one fails to start', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    const first = config('receivers: { fakein: {} }\nexporters: { fakeout: {} }');
    await service.start(first);
    const applied = await service.reload(() => config('receivers: { fakein: { fail_start: true } }\nexporters: { fakeout: {} }'));
    expect(applied).toBe(false);
    expect(service.ready).toBe(true);
    expect(service.config).toBe(first);
  });

  it('starts no receiver of the new config when a stop is asked for while the reload starts it', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    await service.start(config('receivers: { fakein: {} }\nexporters: { fakeout: {} }'));
    PIPELINES = '    traces: { receivers: [fakein/next], exporters: [fakeout/slow] }\n';
    const reloaded = service.reload(() => config('receivers: { fakein/next: {} }\nexporters: { fakeout/slow: { start_delay_ms: 1000 } }'));
    await waitUntil(() => recorder.events.includes('start exporter fakeout/slow'), 5_000, 'the new graph to start');
    await service.shutdown();
    expect(await reloaded).toBe(false);
    expect(recorder.events).not.toContain('start receiver fakein/next');
    expect(recorder.events).toContain('shutdown exporter fakeout/slow');
  });

  it('stops when asked, though a start is still running (the backstop counts from the call)', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    const hanging = config('receivers: { fakein: { hang_start: true } }\nexporters: { fakeout: {} }');
    const grace = { ...hanging, service: { ...hanging.service, shutdown_grace: 200 } };
    void service.start(grace).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Before, the stop waited behind the start for ever.
    await expect(service.shutdown()).resolves.toBeUndefined();
  });

  it('refuses a storage directory under /proc, which Node\'s recursive mkdir never finishes, with a clear error', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    const good = config('receivers: { fakein: {} }\nexporters: { fakeout: {} }');
    const bad = { ...good, service: { ...good.service, storage: { directory: '/proc/sluice-nowhere/data' } } };
    await expect(service.start(bad)).rejects.toThrow(/service\.storage\.directory: \/proc\/sluice-nowhere\/data is not a usable directory: ENOENT/);
  });

  it('refuses an unusable storage directory with a clear error', async () => {
    PIPELINES = '    traces: { receivers: [fakein], exporters: [fakeout] }\n';
    const good = config('receivers: { fakein: {} }\nexporters: { fakeout: {} }');
    writeFileSync(join(directory, 'a-file'), '');
    const bad = { ...good, service: { ...good.service, storage: { directory: join(directory, 'a-file', 'data') } } };
    await expect(service.start(bad)).rejects.toThrow(/service\.storage\.directory: .* is not a usable directory/);
    // The directory named is itself a file: said so, not EACCES.
    const file = { ...good, service: { ...good.service, storage: { directory: join(directory, 'a-file') } } };
    await expect(service.start(file)).rejects.toThrow(/a-file is not a usable directory: it is a file, not a directory$/);
  });
});
