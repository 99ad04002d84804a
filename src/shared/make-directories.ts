// `mkdir -p`, one level at a time. Node 20's `mkdir(..., { recursive: true })`
// never settles for a path under /proc (a directory there answers ENOENT
// under a parent that exists, and Node retries it for ever, at full CPU on a
// libuv thread), which left the daemon starting for good. Here each level is
// tried at most twice, so such a path fails with the kernel's ENOENT.
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function makeDirectories(path: string): Promise<void> {
  try {
    await mkdir(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(path);
    if (code !== 'ENOENT' || parent === path) throw err;
    await makeDirectories(parent);
    await mkdir(path).catch(function existsNow(again: unknown) {
      if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
    });
  }
}
