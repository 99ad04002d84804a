// Appends one OTLP/JSON ExportTraceServiceRequest per line. It has no queue:
// consume() settles once the line is written (and fsynced when configured).
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { CreateSettings, Exporter } from '../../core/component.js';
import { exporterMetrics } from '../../shared/telemetry.js';
import type { FileConfig } from './config.js';

const JSON_SLICE_MS = 1; // longest stretch of JSON encoding between two turns of the event loop

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
      // Encoding runs in slices beside other batches' encoding; the writes stay in consume() order.
      const line = batch.toJsonBytes(JSON_SLICE_MS, '\n');
      const write = tail.then(async function writeLine() {
        const bytes = await line;
        if (handle === undefined) throw new Error(`exporters.${settings.id}: not started`);
        await handle.write(bytes);
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
