// One open queue per directory: two writers would interleave frames and
// reuse sequence numbers. Held in-process by a set of resolved paths and
// across processes by a `lock` file with the holder's pid. A lock left by a
// dead process (SIGKILL) is taken over; so is one naming our own pid (a
// container restart reuses pid 1), since this process does not hold it.
// The lock also names when its holder started (`<pid>:<start>`, the start
// time in /proc/<pid>/stat), so one whose pid another process now has (pids
// are reused: pid_max may be 32768, and a restarted container numbers its
// processes from 1 again) is told from a live holder and taken over too.
//
// Node has no flock, so taking the lock must be atomic by itself: `lock` is
// a symbolic link whose target is the pid, made in one step that fails if a
// `lock` exists (two processes starting at once: one wins). A short link
// lives in its inode, with no data block, so the lock is taken on a full
// disk too: a daemon restarted there must start to deliver its queues and
// free the space. (Locks written by earlier versions, a file holding the
// pid, are still read.) A dead holder's lock is renamed aside before it goes,
// and put back if it turns out to be a live holder's that replaced it
// meanwhile, so two processes taking over one stale lock never remove each
// other's.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, readlink, rename, symlink, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { QueueLockedError } from './errors.js';

const LOCK_FILE = 'lock';
/** Stale locks taken over in a row before giving up (each attempt lost to another process taking it). */
const MAX_ATTEMPTS = 5;
const heldDirectories = new Set<string>();

export interface DirectoryLock {
  release(): Promise<void>;
}

export async function lockDirectory(directory: string): Promise<DirectoryLock> {
  const key = resolve(directory);
  if (heldDirectories.has(key)) throw new QueueLockedError(directory, 'another queue in this process');
  heldDirectories.add(key);
  const path = join(directory, LOCK_FILE);
  try {
    await acquire(directory, path);
  } catch (err) {
    heldDirectories.delete(key);
    throw err;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      heldDirectories.delete(key);
      await unlink(path).catch(() => undefined);
    },
  };
}

/** What a lock names: a pid, with its start time unless an earlier version wrote it. */
interface Holder {
  readonly pid: number;
  readonly startTime: string | undefined;
  /** The lock's text as read, to tell it from one another process wrote meanwhile. */
  readonly text: string;
}

async function acquire(directory: string, path: string): Promise<void> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (await createExclusively(path)) return;
    const holder = await readHolder(path);
    if (holder !== undefined && holder.pid !== process.pid && holds(holder)) {
      throw new QueueLockedError(directory, `process ${holder.pid}`);
    }
    await removeStale(path, holder);
  }
  throw new QueueLockedError(directory, 'other processes taking it over at the same time');
}

/** What this process's locks name: its pid, and its start time where /proc tells it (read once). */
let ownLockText: string | undefined;

function lockText(): string {
  if (ownLockText === undefined) {
    const startTime = startTimeOf(process.pid);
    ownLockText = startTime === undefined ? String(process.pid) : `${process.pid}:${startTime}`;
  }
  return ownLockText;
}

/** Creates `path` naming our pid and start time, or returns false if it exists. */
async function createExclusively(path: string): Promise<boolean> {
  try {
    await symlink(lockText(), path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Removes the lock `stale` (a dead holder, or none) left; one another process
 * took over meanwhile is put back (Linux's link() links a symbolic link itself).
 */
async function removeStale(path: string, stale: Holder | undefined): Promise<void> {
  const aside = `${path}.stale.${process.pid}.${randomUUID()}`;
  try {
    await rename(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // gone already: create it again
    throw err;
  }
  try {
    const moved = await readHolder(aside);
    if (moved?.text !== stale?.text) await link(aside, path).catch(ignoreExisting);
  } finally {
    await unlink(aside);
  }
}

/** A third process created a lock while the live one was aside: that one stays, and the next look names its holder. */
function ignoreExisting(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
}

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const text = await readLock(path);
    const [pidText = '', startTime] = text.trim().split(':');
    const pid = Number.parseInt(pidText, 10);
    return Number.isInteger(pid) && pid > 0 ? { pid, startTime, text } : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The pid text of a lock: a link's target, or an earlier version's file content. */
async function readLock(path: string): Promise<string> {
  try {
    return await readlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return readFile(path, 'utf8');
    throw err;
  }
}

/** Whether the lock's holder still runs: its pid is alive and, when the lock says when it started, started then. */
function holds(holder: Holder): boolean {
  if (!isAlive(holder.pid)) return false;
  if (holder.startTime === undefined) return true;
  const startTime = startTimeOf(holder.pid);
  return startTime === undefined || startTime === holder.startTime;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return procStat(pid)?.state !== 'Z';
}

/** When `pid` started (clock ticks since boot), or undefined without /proc (not Linux). */
function startTimeOf(pid: number): string | undefined {
  return procStat(pid)?.startTime;
}

/**
 * A process's state (a killed process not yet reaped by its parent is a
 * zombie, `Z`, and still answers kill(pid, 0)) and start time, from
 * /proc/<pid>/stat: `pid (comm) state ...` with the start time the 22nd
 * field; comm may contain spaces, so fields are counted after the last ')'.
 */
function procStat(pid: number): { state: string | undefined; startTime: string | undefined } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // no /proc (not Linux), or gone: trust kill()
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], startTime: fields[19] };
}
