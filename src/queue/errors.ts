// One error class per queue failure, each with a stable code. A full queue is
// backpressure the caller decides about (drop or refuse); a record larger than
// the whole queue can never fit, so it is permanent.
import { PermanentError, SluiceError } from '../shared/errors.js';

export class QueueFullError extends SluiceError {
  readonly queue: string;

  constructor(queue: string, sizeBytes: number, capacityBytes: number) {
    super('SLUICE_ERR_QUEUE_FULL', `queue ${queue} is full (${sizeBytes} of ${capacityBytes} bytes)`);
    this.queue = queue;
  }
}

export class RecordTooLargeError extends PermanentError {
  override readonly code = 'SLUICE_ERR_RECORD_TOO_LARGE';
}

/** The queue directory cannot be created, read or written. */
export class QueueDirectoryError extends SluiceError {
  readonly path: string;

  constructor(path: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('SLUICE_ERR_QUEUE_DIRECTORY', `queue directory ${path} is not usable: ${reason}`, { cause });
    this.path = path;
  }
}

export class QueueClosedError extends SluiceError {
  constructor(queue: string) {
    super('SLUICE_ERR_QUEUE_CLOSED', `queue ${queue} is closed`);
  }
}

/** Writing or fsyncing an append failed; the records in that write were not stored. */
export class QueueWriteError extends SluiceError {
  constructor(queue: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('SLUICE_ERR_QUEUE_WRITE', `queue ${queue}: append failed: ${reason}`, { cause });
  }
}

/** Another queue (in this process or another live one) already has the directory open. */
export class QueueLockedError extends SluiceError {
  readonly path: string;
  /** Who holds it: `process <pid>`, or another queue in this process. */
  readonly holder: string;

  constructor(path: string, holder: string) {
    super('SLUICE_ERR_QUEUE_LOCKED', `queue directory ${path} is already in use by ${holder}`);
    this.path = path;
    this.holder = holder;
  }
}
