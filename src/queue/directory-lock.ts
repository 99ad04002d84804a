// One open queue per directory: two writers would interleave frames and
// reuse sequence numbers. Held in-process by a set of resolved paths and
// across processes by a `lock` file with the holder's pid. A lock left by a
// dead process (SIGKILL) is taken over; so is one naming our own pid (a
// container restart reuses pid 1), since this process does not hold it.
import { readFileSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { QueueLockedError } from './errors.js';

const LOCK_FILE = 'lock';
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
    const holder = await readHolder(path);
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
      throw new QueueLockedError(directory, `process ${holder}`);
    }
    await writeFile(path, String(process.pid));
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

async function readHolder(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/** A killed process not yet reaped by its parent still answers kill(pid, 0). */
function isZombie(pid: number): boolean {
  try {
    // /proc/<pid>/stat: `pid (comm) state ...`; comm may contain spaces, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false; // no /proc (not Linux): trust kill()
  }
}
