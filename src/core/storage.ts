// service.storage.directory: created at start, and refused early with a clear
// message when unusable, rather than failing later inside a queue.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { lockDirectory, type DirectoryLock } from '../queue/directory-lock.js';
import { QueueLockedError } from '../queue/errors.js';
import { errorMessage, SluiceError } from '../shared/errors.js';
import { makeDirectories } from '../shared/make-directories.js';

export class StorageError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_STORAGE', message, options);
  }
}

/** Creates the directory if needed and checks it is writable; returns its absolute path. */
export async function ensureStorageDirectory(directory: string): Promise<string> {
  const absolute = resolve(directory);
  try {
    await makeDirectories(absolute);
    // A file of that name is no directory (mkdir took it for one; access would say EACCES).
    if (!(await stat(absolute)).isDirectory()) throw new Error('it is a file, not a directory');
    await access(absolute, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new StorageError(`service.storage.directory: ${absolute} is not a usable directory: ${errorMessage(err)}`, { cause: err });
  }
  return absolute;
}

/**
 * Takes the storage directory's lock (a `lock` link in it, as each queue's
 * directory has) before anything in it is opened: a second daemon on the
 * same directory stops here, having touched none of the running one's files
 * (its sampling decisions were rewritten before a queue's lock refused it).
 */
export async function lockStorageDirectory(directory: string): Promise<DirectoryLock> {
  try {
    return await lockDirectory(directory);
  } catch (err) {
    if (err instanceof QueueLockedError) throw new StorageError(`service.storage.directory: ${directory} is already in use by ${err.holder}`, { cause: err });
    throw new StorageError(`service.storage.directory: ${directory} could not be locked: ${errorMessage(err)}`, { cause: err });
  }
}
