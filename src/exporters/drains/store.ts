// API-managed drains on disk: one JSON file under service.storage.directory,
// replaced atomically (write a temporary file, fsync it, rename it over the
// old one, fsync the directory) so a crash leaves the old or the new list,
// never a torn one. It holds secrets: the file is created with mode 0600.
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SluiceError } from '../../core/errors.js';
import type { DrainDefinition } from './definition.js';

export const STORE_FILE = 'drains.json';
const STORE_VERSION = 1;

interface StoreFile {
  readonly version: number;
  readonly drains: DrainDefinition[];
}

export class DrainStoreError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_DRAIN_STORE', message, options);
  }
}

export class DrainStore {
  readonly path: string;

  constructor(storageDirectory: string) {
    this.path = join(storageDirectory, STORE_FILE);
  }

  async load(): Promise<DrainDefinition[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new DrainStoreError(`cannot read ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    try {
      const parsed = JSON.parse(text) as StoreFile;
      if (parsed.version !== STORE_VERSION || !Array.isArray(parsed.drains)) throw new Error(`unsupported version ${String(parsed.version)}`);
      return parsed.drains.map((drain) => ({ ...drain, source: 'api' as const }));
    } catch (err) {
      throw new DrainStoreError(`${this.path} is not a valid drains file: ${(err as Error).message}`, { cause: err });
    }
  }

  async save(drains: readonly DrainDefinition[]): Promise<void> {
    const body: StoreFile = { version: STORE_VERSION, drains: [...drains] };
    const temporary = `${this.path}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(body, null, 2));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temporary, this.path);
    } catch (err) {
      await unlink(temporary).catch(() => undefined);
      throw err;
    }
    const directory = await open(dirname(this.path), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  }
}
