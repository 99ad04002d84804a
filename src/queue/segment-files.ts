// Segment files on disk: naming, directory preparation and crash recovery.
import { mkdir, open, readFile, readdir, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { QueueDirectoryError } from './errors.js';
import { readAckFile } from './ack-file.js';
import { DIRECTORY_MODE } from './file-mode.js';
import { decodeFrame, offsetAfterCorrupt } from './framing.js';

// Fixed width, so lexical order is numeric order.
const SEGMENT_NAME = /^(\d{20})\.seg$/;
const PROBE_FILE = '.probe';

export function segmentFileName(base: number): string {
  return `${String(base).padStart(20, '0')}.seg`;
}

/** Creates the directory and proves it writable, or throws QueueDirectoryError naming it. */
export async function prepareDirectory(directory: string): Promise<void> {
  try {
    await mkdir(directory, { recursive: true, mode: DIRECTORY_MODE });
    const probe = join(directory, PROBE_FILE);
    await writeFile(probe, '');
    await unlink(probe);
  } catch (err) {
    throw new QueueDirectoryError(directory, err);
  }
}

/** Makes a newly created file's directory entry durable. */
export async function fsyncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

export interface RecoveredSegment {
  readonly base: number;
  readonly path: string;
  /** Records kept: the whole ones and any corrupt one between them, which the reader skips. */
  readonly count: number;
  /** Bytes kept (the file is truncated to this). */
  readonly bytes: number;
  /** Byte offset of the first record at or after the acknowledged position. */
  readonly readOffset: number;
  /** Sequence number of that record. */
  readonly readSeq: number;
}

/**
 * Scans every segment in order, keeps every whole record, truncates a torn or
 * corrupt tail (a crash mid-write, or a damaged sector), and deletes segments
 * that are empty or entirely acknowledged. A corrupt record followed by a
 * valid one is left in place and counted (it keeps its sequence number, so
 * the records after it keep theirs): the reader skips it alone.
 *
 * A segment's records end where the next segment starts: the queue starts a
 * segment at the sequence number after the last record it stored. Whole
 * records past that point are what a failed write left behind (their appends
 * were refused), so they are cut off too; counting them would give two files
 * the same sequence numbers, and an ack position past the earlier one's end
 * would skip stored records at the head of the next.
 */
export async function recoverSegments(
  directory: string,
  ackPosition: number,
  logger: Logger,
  queue: string,
): Promise<RecoveredSegment[]> {
  const names = (await readdir(directory)).filter((name) => SEGMENT_NAME.test(name)).sort();
  const bases = names.map((name) => Number(SEGMENT_NAME.exec(name)?.[1]));
  const kept: RecoveredSegment[] = [];
  for (const [index, name] of names.entries()) {
    const path = join(directory, name);
    const base = bases[index] ?? 0;
    const maxCount = (bases[index + 1] ?? Number.POSITIVE_INFINITY) - base;
    const buf = await readFile(path);
    const firstUnacked = Math.max(base, ackPosition);
    let pos = 0;
    let count = 0;
    let readOffset = 0;
    let corrupt = 0;
    let problem: string | undefined;
    let overlaps = false;
    while (pos < buf.length) {
      if (count === maxCount) {
        overlaps = true;
        break;
      }
      const result = decodeFrame(buf, pos);
      const next = result.kind === 'frame' ? pos + result.frame.frameBytes : result.kind === 'corrupt' ? offsetAfterCorrupt(buf, pos) : undefined;
      if (next === undefined) {
        problem = result.kind === 'corrupt' ? result.reason : 'torn record';
        break;
      }
      if (result.kind === 'corrupt') corrupt += 1;
      if (base + count === firstUnacked) readOffset = pos;
      count += 1;
      pos = next;
    }
    const whole = count - corrupt;
    if (corrupt > 0) {
      logger.warn(
        { queue, segment: name, corruptRecords: corrupt, keptRecords: whole },
        'queue segment holds corrupt records between whole ones; kept every whole record, the corrupt ones are skipped when read',
      );
    }
    if (problem !== undefined) {
      await truncate(path, pos);
      logger.warn(
        { queue, segment: name, keptRecords: whole, discardedBytes: buf.length - pos, reason: problem },
        'queue segment ends in a torn or corrupt record; truncated it and kept every whole record before it',
      );
    }
    if (overlaps) {
      await truncate(path, pos);
      logger.warn(
        { queue, segment: name, keptRecords: whole, discardedBytes: buf.length - pos },
        'queue segment holds records a failed write left past the start of the next segment; truncated them',
      );
    }
    if (count === 0 || base + count <= ackPosition) {
      await removeFile(path);
      continue;
    }
    kept.push({ base, path, count, bytes: pos, readOffset, readSeq: firstUnacked });
  }
  return kept;
}

/**
 * Bytes of the segments in `directory` holding records past its
 * acknowledged position, read without opening (or changing) the queue: what
 * a queue no exporter reads still has to deliver.
 */
export async function undeliveredBytes(directory: string): Promise<number> {
  const names = (await readdir(directory)).filter((name) => SEGMENT_NAME.test(name)).sort();
  if (names.length === 0) return 0;
  const ack = await readAckFile(directory);
  const acknowledged = 'position' in ack ? ack.position : 0;
  let bytes = 0;
  for (const [index, name] of names.entries()) {
    const path = join(directory, name);
    const base = Number(SEGMENT_NAME.exec(name)?.[1]);
    const next = names[index + 1];
    if (next === undefined) {
      // A segment's records end where the next one starts; the last one's are counted.
      const buf = await readFile(path);
      if (base + wholeRecords(buf) > acknowledged) bytes += buf.length;
    } else if (Number(SEGMENT_NAME.exec(next)?.[1]) > acknowledged) {
      bytes += (await stat(path)).size;
    }
  }
  return bytes;
}

/** A folder under a root of queue folders, with what its queues hold undelivered. */
export interface FolderBacklog {
  readonly folder: string;
  readonly directory: string;
  readonly bytes: number;
}

/**
 * The folders under `root` that `pick` chooses, each with the undelivered
 * bytes of its queues (the sub-folders `queues` names; '' is the folder
 * itself), keeping those that hold any. A root never made holds none; a
 * queue folder that is missing or not a folder (not one this daemon made)
 * counts 0.
 */
export async function undeliveredFolders(root: string, pick: (folder: string) => boolean, queues: readonly string[] = ['']): Promise<FolderBacklog[]> {
  let folders: string[];
  try {
    folders = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const backlogs: FolderBacklog[] = [];
  for (const folder of folders.sort()) {
    if (!pick(folder)) continue;
    const directory = join(root, folder);
    let bytes = 0;
    for (const queue of queues) bytes += await queueBacklog(join(directory, queue));
    if (bytes > 0) backlogs.push({ folder, directory, bytes });
  }
  return backlogs;
}

async function queueBacklog(directory: string): Promise<number> {
  try {
    return await undeliveredBytes(directory);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 0;
    throw err;
  }
}

function wholeRecords(buf: Buffer): number {
  let count = 0;
  for (let pos = 0; pos < buf.length; count++) {
    const result = decodeFrame(buf, pos);
    const next = result.kind === 'frame' ? pos + result.frame.frameBytes : result.kind === 'corrupt' ? offsetAfterCorrupt(buf, pos) : undefined;
    if (next === undefined) break;
    pos = next;
  }
  return count;
}
