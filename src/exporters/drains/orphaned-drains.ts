// Drain folders no running drain reads. A drain's queues live under its id
// (drain-unit.ts): a config drain taken out of the file, or every drain while
// the drains exporter is in no pipeline, leaves its undelivered records
// there, acknowledged to their senders, until a drain of that id runs again
// (a config drain's id comes from its name). The start says so, as it does
// for an exporter's queue (exporterhelper/orphaned-queues.ts).
import { join } from 'node:path';
import { undeliveredFolders } from '../../queue/index.js';
import { DRAINS_FOLDER } from './drain-unit.js';

export interface OrphanedDrain {
  readonly drain: string;
  readonly directory: string;
  /** Bytes of its queues' segment files (main and pending) holding records not acknowledged as delivered. */
  readonly bytes: number;
}

/** Folders under `<storage>/drains` holding undelivered records, whose drain is not among `reading` (the drains now known). */
export async function findOrphanedDrains(storageDirectory: string, reading: ReadonlySet<string>): Promise<OrphanedDrain[]> {
  const backlogs = await undeliveredFolders(join(storageDirectory, DRAINS_FOLDER), (drain) => !reading.has(drain), ['queue', 'pending']);
  return backlogs.map(({ folder, directory, bytes }) => ({ drain: folder, directory, bytes }));
}
