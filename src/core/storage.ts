// service.storage.directory: created at start, and refused early with a clear
// message when unusable, rather than failing later inside a queue.
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { errorMessage, SluiceError } from '../shared/errors.js';

export class StorageError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_STORAGE', message, options);
  }
}

/** Creates the directory if needed and checks it is writable; returns its absolute path. */
export async function ensureStorageDirectory(directory: string): Promise<string> {
  const absolute = resolve(directory);
  try {
    await mkdir(absolute, { recursive: true });
    await access(absolute, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new StorageError(`service.storage.directory: ${absolute} is not a usable directory: ${errorMessage(err)}`, { cause: err });
  }
  return absolute;
}
