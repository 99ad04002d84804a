// Queue folders no running exporter reads. A queue lives under its
// exporter's id (create-queue.ts): an exporter renamed or taken out of the
// config leaves its undelivered records there, acknowledged to their
// senders, with nothing to deliver them until an exporter of that id comes
// back. The start says so rather than let them sit there unnoticed.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SendingQueueConfig } from './config.js';
import { undeliveredBytes } from '../../queue/index.js';
import { QUEUES_FOLDER } from './create-queue.js';

export interface OrphanedQueue {
  /** The exporter id the folder belongs to. */
  readonly exporter: string;
  readonly directory: string;
  /** Bytes of its segment files holding records not acknowledged as delivered. */
  readonly bytes: number;
}

/** Folders under `<storage>/queues` holding undelivered records, whose exporter is not among `reading` (the disk queues now open). */
export async function findOrphanedQueues(storageDirectory: string, reading: ReadonlySet<string>): Promise<OrphanedQueue[]> {
  const root = join(storageDirectory, QUEUES_FOLDER);
  let folders: string[];
  try {
    folders = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const orphaned: OrphanedQueue[] = [];
  for (const folder of folders.sort()) {
    const exporter = exporterIdOf(folder);
    if (exporter === undefined || reading.has(exporter)) continue;
    const directory = join(root, folder);
    const bytes = await pendingBytes(directory);
    if (bytes > 0) orphaned.push({ exporter, directory, bytes });
  }
  return orphaned;
}

function exporterIdOf(folder: string): string | undefined {
  try {
    return decodeURIComponent(folder);
  } catch {
    return undefined; // not a folder this daemon made
  }
}

async function pendingBytes(directory: string): Promise<number> {
  try {
    return await undeliveredBytes(directory);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return 0; // not a folder
    throw err;
  }
}

/** Whether an exporter's config (any exporter's) has it read a queue on disk. */
export function readsDiskQueue(config: unknown): boolean {
  if (typeof config !== 'object' || config === null || !('sending_queue' in config)) return false;
  const queue = config.sending_queue as Partial<SendingQueueConfig> | undefined;
  return queue?.enabled === true && queue.storage === 'disk';
}
