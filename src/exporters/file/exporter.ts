// Appends one OTLP/JSON ExportTraceServiceRequest per line. It has no queue:
// consume() settles once the line is written (and fsynced when configured).
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { CreateSettings, Exporter } from '../../core/component.js';
import { appendWhole } from '../../shared/append-whole.js';
import { errorMessage } from '../../shared/errors.js';
import { makeDirectories } from '../../shared/make-directories.js';
import { exporterMetrics } from '../../shared/telemetry.js';
import type { FileConfig } from './config.js';
import { Rotation } from './rotation.js';

const JSON_SLICE_MS = 0.5; // longest stretch of JSON encoding between two turns of the event loop
/** Owner only, as the collector creates it: spans may carry prompts and answers (gen_ai.*.messages). */
const FILE_MODE = 0o600;

interface PendingLine {
  readonly line: Promise<Uint8Array>;
  readonly settle: (err: unknown) => void;
}

/** The file being written, and which file it is, to tell when its path names another. */
interface OpenFile {
  readonly handle: FileHandle;
  readonly dev: number;
  readonly ino: number;
}

export function createFileExporter(settings: CreateSettings, config: FileConfig): Exporter {
  const path = resolve(config.path);
  const metrics = exporterMetrics(settings.telemetry);
  const rotation = config.rotation === undefined ? undefined : new Rotation(path, config.rotation);
  let file: OpenFile | undefined;
  /** Between start() and shutdown(): a file lost to a failed rotation is opened again on the next write. */
  let running = false;
  // Lines that arrive while a write is in flight go out together in the next
  // one (one writev, one fsync), in consume() order, so lines never interleave.
  let pending: PendingLine[] = [];
  let writing: Promise<void> | undefined;
  // Without fsync, lines are still flushed to disk behind the writes, one
  // flush at a time, not waited for. On ext4 (data=ordered) an fsync anywhere
  // (the durable queues' own) must first write out every file's dirty pages:
  // left to pile up, this file's made those fsyncs, and so OTLP
  // acknowledgements, wait 3-5x longer (bench/RESULTS.md, mixed load).
  let flushing: Promise<void> | undefined;

  function flushBehind(h: FileHandle): void {
    flushing ??= h
      .datasync()
      .catch((err: unknown) => settings.logger.warn({ exporter: settings.id, err: String(err) }, 'file exporter: flushing written lines to disk failed'))
      .finally(() => {
        flushing = undefined;
      });
  }

  async function openFile(): Promise<OpenFile> {
    await makeDirectories(dirname(path));
    const handle = await open(path, 'a+', FILE_MODE);
    try {
      const { dev, ino, size } = await handle.stat();
      const cut = await cutTornLine(handle, size);
      if (cut > 0) settings.logger.warn({ exporter: settings.id, path, bytes: cut }, 'file exporter: the file ended inside a line (a write cut short by a crash); cut back to its last whole line');
      return { handle, dev, ino };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /**
   * The file to write to: the open one while the path still names it, else
   * a new one there. Removed or renamed (a rotation), the open file would
   * take every later line with it, acknowledged and lost or misplaced.
   */
  async function fileAtPath(current: OpenFile): Promise<OpenFile> {
    if (await namedByPath(current)) return current;
    settings.logger.info({ exporter: settings.id, path }, 'file exporter: the file was removed or renamed; writing to a new one at its path');
    const next = await openFile();
    // close() waits for a flush still running on it.
    current.handle.close().catch(() => undefined);
    return next;
  }

  async function namedByPath(current: OpenFile): Promise<boolean> {
    try {
      const named = await stat(path);
      return named.dev === current.dev && named.ino === current.ino;
    } catch (err) {
      // Only a path that names nothing now calls for a new file; any other failure leaves the writes where they were.
      const code = (err as NodeJS.ErrnoException).code;
      return code !== 'ENOENT' && code !== 'ENOTDIR';
    }
  }

  /**
   * The file at the path (see fileAtPath), after moving it aside first when
   * `bytes` more would take it past rotation.max_megabytes.
   */
  async function fileFor(bytes: number): Promise<FileHandle> {
    file = file === undefined ? await openFile() : await fileAtPath(file);
    if (rotation !== undefined && rotation.due((await file.handle.stat()).size, bytes)) {
      const full = file;
      file = undefined;
      await flushing;
      await full.handle.close();
      const now = new Date();
      try {
        await rotation.moveAside(now);
        await rotation.prune(now).catch((err: unknown) => settings.logger.warn({ exporter: settings.id, err: String(err) }, 'file exporter: removing old rotated files failed'));
      } catch (err) {
        // Writing on into the same file beats losing the lines.
        settings.logger.warn({ exporter: settings.id, err: String(err) }, 'file exporter: moving the full file aside failed; writing on into it');
      }
    }
    file ??= await openFile();
    return file.handle;
  }

  async function writeGroups(): Promise<void> {
    while (pending.length > 0) {
      const group = pending;
      pending = [];
      const lines = await Promise.allSettled(group.map((p) => p.line));
      const ready: Uint8Array[] = [];
      for (const result of lines) if (result.status === 'fulfilled') ready.push(result.value);
      let failure: unknown;
      try {
        if (!running) throw new Error(`exporters.${settings.id}: not started`);
        if (ready.length > 0) {
          const handle = await fileFor(ready.reduce((sum, line) => sum + line.byteLength, 0));
          await appendWhole(handle, ready);
          if (config.fsync) await handle.sync();
          else flushBehind(handle);
        }
      } catch (err) {
        failure = err;
      }
      group.forEach((p, i) => {
        const result = lines[i] as PromiseSettledResult<Uint8Array>;
        p.settle(result.status === 'rejected' ? result.reason : failure);
      });
    }
    writing = undefined;
  }

  return {
    start: async function start() {
      try {
        file = await openFile();
      } catch (err) {
        throw new Error(`exporters.${settings.id}.path: cannot open ${path} for writing: ${errorMessage(err)}`, { cause: err });
      }
      running = true;
    },
    consume: function consume(batch) {
      // Encoding runs in slices beside other batches' encoding; the writes stay in consume() order.
      const line = batch.toJsonBytes(JSON_SLICE_MS, '\n');
      // Its failure is reported through `written`, once the lines before it are written.
      line.catch(() => undefined);
      const written = new Promise<void>(function enqueue(resolve, reject) {
        pending.push({ line, settle: (err) => (err === undefined ? resolve() : reject(err)) });
      });
      writing ??= writeGroups();
      return written.then(
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
      await writing;
      running = false;
      await flushing;
      const current = file;
      file = undefined;
      await current?.handle.close();
    },
  };
}

const TAIL_CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Cuts the file back to its last whole line and returns the bytes cut. A
 * write the process did not live to finish (kill -9, a power cut) leaves a
 * line cut short, whose request was never acknowledged; left there, it would
 * join the next line written, as a failed write's half line would
 * (appendWhole), and make that acknowledged request unreadable.
 */
async function cutTornLine(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(Math.min(TAIL_CHUNK, size));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const { bytesRead } = await handle.read(chunk, 0, end - start, start);
    const newline = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (newline >= 0) {
      end = start + newline + 1;
      break;
    }
    end = start;
  }
  if (end < size) await handle.truncate(end);
  return size - end;
}
