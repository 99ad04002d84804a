// API-managed drains in one JSON file under service.storage.directory,
// replaced atomically (write a temporary file, fsync it, rename it over the
// old one, fsync the directory) so a crash leaves the old or the new list,
// never a torn one. It holds secrets: the file is created with mode 0600.
// A file that exists but cannot be read back whole stops the start with an
// error naming the file and the bad field: guessing would drop drains. A
// write that fails changes nothing: the change it carried is refused. Only
// the directory's sync can fail after the rename, and then the change is
// made: the file holds it (see replace).
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { StateFileError, StorageWriteError, errorMessage, isNoRoom } from '../../shared/errors.js';
import type { ChangeOutcome, DrainParser, DrainStore, StoredDrain } from '../drain-store.js';

export const DRAINS_FILE = 'drains.json';
const FILE_VERSION = 1;

export class LocalDrainStore<D extends StoredDrain> implements DrainStore<D> {
  readonly path: string;
  readonly #parse: DrainParser<D>;
  readonly #logger: Logger | undefined;
  #drains: D[] | undefined;

  constructor(storageDirectory: string, parse: DrainParser<D>, logger?: Logger) {
    this.path = join(storageDirectory, DRAINS_FILE);
    this.#parse = parse;
    this.#logger = logger;
  }

  async load(): Promise<D[]> {
    this.#drains ??= await this.#read();
    return [...this.#drains];
  }

  async put(drain: D, limit = Infinity): Promise<boolean> {
    const drains = await this.load();
    const at = drains.findIndex((d) => d.id === drain.id);
    if (at === -1 && drains.length >= limit) return false;
    if (at === -1) drains.push(drain);
    else drains[at] = drain;
    await this.replace(drains);
    return true;
  }

  async update(drain: D, previousUpdatedAt: number): Promise<ChangeOutcome> {
    const current = (await this.load()).find((d) => d.id === drain.id);
    if (current === undefined) return 'missing';
    if (current.updatedAt !== previousUpdatedAt) return 'changed';
    await this.put(drain);
    return 'applied';
  }

  async remove(id: string): Promise<'applied' | 'missing'> {
    const drains = await this.load();
    const kept = drains.filter((d) => d.id !== id);
    if (kept.length === drains.length) return 'missing';
    await this.replace(kept);
    return 'applied';
  }

  watch(): void {
    // Only this instance changes its own file.
  }

  async close(): Promise<void> {}

  /**
   * Writes the whole list (the Redis store keeps its local copy this way).
   * A write that fails (a full disk) rejects with StorageWriteError and
   * leaves the file, and the list load() answers, as they were.
   */
  async replace(drains: readonly D[]): Promise<void> {
    try {
      await writeAtomically(this.path, JSON.stringify({ version: FILE_VERSION, drains }, null, 2));
    } catch (err) {
      if (err instanceof UnsyncedRename) {
        // The change is made: the file holds it and a restart reads it. Refusing it now would be untrue (a retried create would make a second drain).
        this.#drains = [...drains];
        this.#logger?.warn({ path: this.path, err: err.message }, 'drains: the change was stored, but the storage directory could not be synced; a crash of the machine may undo it');
        return;
      }
      const full = isNoRoom(err);
      const why = full ? `the storage is full (${errorMessage(err)})` : errorMessage(err);
      throw new StorageWriteError(`the drains could not be stored in ${this.path}: ${why}; nothing was changed, try again${full ? ' once there is room' : ''}`, { cause: err });
    }
    this.#drains = [...drains];
  }

  async #read(): Promise<D[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new StateFileError(`cannot read ${this.path}: ${errorMessage(err)}`, { cause: err });
    }
    const fail = (problem: string): never => {
      throw new StateFileError(`${this.path} is not a valid drains file: ${problem} (fix or move the file; the drains API rewrites it)`);
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return fail(errorMessage(err));
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return fail('(root): must be an object {"version": 1, "drains": [...]}');
    const file = parsed as { version?: unknown; drains?: unknown };
    if (file.version !== FILE_VERSION) return fail(`version: must be ${FILE_VERSION}`);
    if (!Array.isArray(file.drains)) return fail('drains: must be an array');
    const seen = new Set<string>();
    return file.drains.map((value: unknown, index) => {
      let drain: D;
      try {
        drain = this.#parse(value, ['drains', index]);
      } catch (err) {
        return fail(errorMessage(err));
      }
      if (seen.has(drain.id)) return fail(`drains[${index}].id: duplicate id ${drain.id}`);
      seen.add(drain.id);
      return drain;
    });
  }
}

/**
 * A rename that took place but whose directory could not be synced: the new
 * file is the one the path names and a restart reads, but a crash of the
 * machine may still bring the old one back.
 */
export class UnsyncedRename extends Error {}

/**
 * Replaces the file at `path` with `text` whole. Rejects, leaving the old
 * file as it was, when any step up to the rename fails; the directory is
 * opened first, so that running out of file descriptors is one of those.
 * Rejects with UnsyncedRename when only the directory's sync after the
 * rename failed.
 */
export async function writeAtomically(path: string, text: string): Promise<void> {
  // Unique per write: two writers of one file never share a temporary one.
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const directory = await open(dirname(path), 'r');
  try {
    const handle = await open(temporary, 'w', 0o600);
    try {
      try {
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, path);
    } catch (err) {
      // A write that failed (a full disk) must not leave its part behind either.
      await unlink(temporary).catch(() => undefined);
      throw err;
    }
    await directory.sync().catch((err: unknown) => {
      throw new UnsyncedRename(`${path} was replaced, but its directory could not be synced: ${errorMessage(err)}`, { cause: err });
    });
  } finally {
    // A read-only directory descriptor has nothing to flush: an error closing it changes no outcome (after the rename the change is made).
    await directory.close().catch(() => undefined);
  }
}
