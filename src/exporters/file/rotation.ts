// Size-based rotation of the file exporter's output, as the collector's file
// exporter does it (lumberjack): once the next write would take the file past
// max_megabytes, it is renamed `<name>-<time><ext>` (time in UTC unless
// localtime, `2026-11-28T15-04-05.000`) and a new file is begun; moved-aside
// files beyond max_backups (newest kept) or older than max_days go.
import { lstat, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { RotationConfig } from './config.js';

const MIB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
const STAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/;

export class Rotation {
  readonly maxBytes: number;
  readonly #path: string;
  readonly #config: RotationConfig;
  readonly #prefix: string;
  readonly #ext: string;

  constructor(path: string, config: RotationConfig) {
    this.#path = path;
    this.#config = config;
    this.maxBytes = config.max_megabytes * MIB;
    this.#ext = extname(path);
    this.#prefix = `${basename(path, this.#ext)}-`;
  }

  /** Whether a write of `bytes` onto a file of `size` bytes goes to a new file first (a line longer than the limit still goes whole, into a file of its own). */
  due(size: number, bytes: number): boolean {
    return size > 0 && size + bytes > this.maxBytes;
  }

  /** Moves the closed file aside under a name of its own; returns that name. */
  async moveAside(now: Date): Promise<string> {
    let at = now.getTime();
    // Two rotations within a millisecond would share a name: the later takes the next free one.
    for (;;) {
      const target = join(dirname(this.#path), `${this.#prefix}${this.#stamp(new Date(at))}${this.#ext}`);
      if (!(await exists(target))) {
        await rename(this.#path, target);
        return target;
      }
      at += 1;
    }
  }

  /** Removes the moved-aside files beyond max_backups and older than max_days; returns the removed paths. */
  async prune(now: Date): Promise<string[]> {
    const { max_backups: maxBackups, max_days: maxDays } = this.#config;
    if (maxBackups === 0 && maxDays === 0) return [];
    const directory = dirname(this.#path);
    const backups: Array<{ name: string; at: number }> = [];
    for (const name of await readdir(directory)) {
      const at = this.#timeOf(name);
      if (at !== undefined) backups.push({ name, at });
    }
    backups.sort((a, b) => b.at - a.at);
    const oldest = maxDays === 0 ? -Infinity : now.getTime() - maxDays * DAY_MS;
    const doomed = backups.filter((b, i) => (maxBackups > 0 && i >= maxBackups) || b.at < oldest).map((b) => join(directory, b.name));
    await Promise.all(doomed.map((path) => unlink(path).catch(() => undefined)));
    return doomed;
  }

  #stamp(at: Date): string {
    const local = this.#config.localtime;
    const parts = local
      ? [at.getFullYear(), at.getMonth() + 1, at.getDate(), at.getHours(), at.getMinutes(), at.getSeconds(), at.getMilliseconds()]
      : [at.getUTCFullYear(), at.getUTCMonth() + 1, at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds(), at.getUTCMilliseconds()];
    const [y, mo, d, h, mi, s, ms] = parts.map((n, i) => String(n).padStart(i === 0 ? 4 : i === 6 ? 3 : 2, '0'));
    return `${y}-${mo}-${d}T${h}-${mi}-${s}.${ms}`;
  }

  /** The time a moved-aside file's name says, or undefined for any other file. */
  #timeOf(name: string): number | undefined {
    if (!name.startsWith(this.#prefix) || !name.endsWith(this.#ext)) return undefined;
    const match = STAMP.exec(name.slice(this.#prefix.length, name.length - this.#ext.length));
    if (match === null) return undefined;
    const [y, mo, d, h, mi, s, ms] = match.slice(1).map(Number) as [number, number, number, number, number, number, number];
    return this.#config.localtime ? new Date(y, mo - 1, d, h, mi, s, ms).getTime() : Date.UTC(y, mo - 1, d, h, mi, s, ms);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
