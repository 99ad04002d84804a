// Queue folders no running exporter reads. A queue lives under its
// exporter's id (create-queue.ts): an exporter renamed or taken out of the
// config leaves its undelivered records there, acknowledged to their
// senders, with nothing to deliver them until an exporter of that id comes
// back. The start says so rather than let them sit there unnoticed.
import { join } from 'node:path';
import type { SendingQueueConfig } from './config.js';
import { undeliveredFolders } from '../../queue/index.js';
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
  const orphaned = (folder: string): boolean => {
    const exporter = exporterIdOf(folder);
    return exporter !== undefined && !reading.has(exporter);
  };
  const backlogs = await undeliveredFolders(join(storageDirectory, QUEUES_FOLDER), orphaned);
  return backlogs.map(({ folder, directory, bytes }) => ({ exporter: exporterIdOf(folder) ?? folder, directory, bytes }));
}

function exporterIdOf(folder: string): string | undefined {
  try {
    return decodeURIComponent(folder);
  } catch {
    return undefined; // not a folder this daemon made
  }
}

/** Whether an exporter's config (any exporter's) has it read a queue on disk. */
export function readsDiskQueue(config: unknown): boolean {
  if (typeof config !== 'object' || config === null || !('sending_queue' in config)) return false;
  const queue = config.sending_queue as Partial<SendingQueueConfig> | undefined;
  return queue?.enabled === true && queue.storage === 'disk';
}
