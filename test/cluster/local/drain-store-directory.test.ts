// drains.json's directory failing around the rename, which a test cannot make
// a real file system do on demand: node:fs/promises' open is wrapped so that
// opening the storage directory, syncing it or closing it, fails as a descriptor
// shortage or a failing disk would make it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DRAINS_FILE, LocalDrainStore } from '../../../src/cluster/local/drain-store.js';
import { parseStoredDrain } from '../../../src/exporters/drains/definition-schema.js';
import type { DrainDefinition } from '../../../src/exporters/drains/definition.js';
import { DRAIN } from './drain-fixture.js';
import { StorageWriteError } from '../../../src/shared/errors.js';

const failing = vi.hoisted(() => ({ directory: '', on: 'none' as 'none' | 'open' | 'sync' | 'close' }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof actual.open>): Promise<FileHandle> => {
    if (args[0] !== failing.directory || failing.on === 'none') return actual.open(...args);
    if (failing.on === 'open') throw Object.assign(new Error(`EMFILE: too many open files, open '${failing.directory}'`), { code: 'EMFILE' });
    const handle = await actual.open(...args);
    if (failing.on === 'sync') handle.sync = () => Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    // The descriptor is closed, but the close reports an error, as close(2) may.
    const close = handle.close.bind(handle);
    if (failing.on === 'close') handle.close = () => close().then(() => Promise.reject(Object.assign(new Error('EIO: i/o error, close'), { code: 'EIO' })));
    return handle;
  };
  return { ...actual, open, default: { ...actual, open } };
});

const OTHER: DrainDefinition = { ...DRAIN, id: 'drn_qrstuvwxyzabcdef', name: 'other' };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-store-'));
  failing.directory = dir;
  failing.on = 'none';
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const stored = (): unknown => JSON.parse(readFileSync(join(dir, DRAINS_FILE), 'utf8'));

describe('drains.json when its directory fails', () => {
  it('refuses a change whose directory cannot be opened, leaving the file and the list as they were', async () => {
    const store = new LocalDrainStore(dir, parseStoredDrain);
    await store.put(DRAIN);
    failing.on = 'open';
    const err = await store.put(OTHER).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageWriteError);
    expect((err as Error).message).toContain('EMFILE');
    expect((err as Error).message).toContain('nothing was changed');
    expect(stored()).toEqual({ version: 1, drains: [DRAIN] });
    expect(await store.load()).toEqual([DRAIN]);
  });

  it('keeps a change whose directory sync failed after the rename, as the file and a restart have it, and warns', async () => {
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const store = new LocalDrainStore(dir, parseStoredDrain, logger);
    await store.put(DRAIN);
    failing.on = 'sync';
    await store.put(OTHER);
    expect(stored()).toEqual({ version: 1, drains: [DRAIN, OTHER] });
    expect(await store.load()).toEqual([DRAIN, OTHER]);
    expect(await new LocalDrainStore(dir, parseStoredDrain).load()).toEqual([DRAIN, OTHER]);
    expect(warnings.join('')).toContain('the storage directory could not be synced');
    expect(warnings.join('')).toContain('EIO');
  });

  it('keeps a change whose directory, synced, reported an error as it was closed: the file holds the change and nothing is left to undo', async () => {
    const store = new LocalDrainStore(dir, parseStoredDrain);
    await store.put(DRAIN);
    failing.on = 'close';
    await store.put(OTHER);
    expect(stored()).toEqual({ version: 1, drains: [DRAIN, OTHER] });
    expect(await store.load()).toEqual([DRAIN, OTHER]);
  });
});
