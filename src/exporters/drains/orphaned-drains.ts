// Drain folders no running drain reads. A drain's queues live under its id
// (drain-unit.ts): a config drain taken out of the file, or every drain while
// the drains exporter is in no pipeline, leaves its undelivered records
// there, acknowledged to their senders, until a drain of that id runs again
// (a config drain's id comes from its name). The start says so, as it does
// for an exporter's queue (exporterhelper/orphaned-queues.ts).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { undeliveredBytes } from '../../queue/index.js';
import { DRAINS_FOLDER } from './drain-unit.js';

export interface OrphanedDrain {
  readonly drain: string;
  readonly directory: string;
  /** Bytes of its queues' segment files (main and pending) holding records not acknowledged as delivered. */
  readonly bytes: number;
}

/** Folders under `<storage>/drains` holding undelivered records, whose drain is not among `reading` (the drains now known). */
export async function findOrphanedDrains(storageDirectory: string, reading: ReadonlySet<string>): Promise<OrphanedDrain[]> {
  const root = join(storageDirectory, DRAINS_FOLDER);
  let folders: string[];
  try {
    folders = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const orphaned: OrphanedDrain[] = [];
  for (const drain of folders.sort()) {
    if (reading.has(drain)) continue;
    const directory = join(root, drain);
    const bytes = (await queueBytes(join(directory, 'queue'))) + (await queueBytes(join(directory, 'pending')));
    if (bytes > 0) orphaned.push({ drain, directory, bytes });
  }
  return orphaned;
}

async function queueBytes(directory: string): Promise<number> {
  try {
    return await undeliveredBytes(directory);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 0; // no such queue, or not a folder this daemon made
    throw err;
  }
}
