// Appends one OTLP/JSON ExportTraceServiceRequest per line. It has no queue:
// consume() settles once the line is written (and fsynced when configured).
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { CreateSettings, Exporter } from '../../core/component.js';
import { exporterMetrics } from '../../core/telemetry.js';
import type { FileConfig } from './config.js';

export function createFileExporter(settings: CreateSettings, config: FileConfig): Exporter {
  const path = resolve(config.path);
  const metrics = exporterMetrics(settings.telemetry);
  let handle: FileHandle | undefined;
  // Writes are chained so lines never interleave.
  let tail: Promise<unknown> = Promise.resolve();

  return {
    start: async function start() {
      await mkdir(dirname(path), { recursive: true });
      handle = await open(path, 'a');
    },
    consume: function consume(batch) {
      const line = `${batch.toJson()}\n`;
      const write = tail.then(async function writeLine() {
        if (handle === undefined) throw new Error(`exporters.${settings.id}: not started`);
        await handle.write(line);
        if (config.fsync) await handle.sync();
      });
      tail = write.catch(() => undefined);
      return write.then(
        () => {
          metrics.sent.inc({ exporter: settings.id }, batch.spanCount);
        },
        (err: unknown) => {
          metrics.failed.inc({ exporter: settings.id }, batch.spanCount);
          throw err;
        },
      );
    },
    shutdown: async function shutdown() {
      await tail;
      const h = handle;
      handle = undefined;
      await h?.close();
    },
  };
}
