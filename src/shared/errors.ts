// Errors are classified by type, never by message. A PermanentError is
// dropped and counted; anything else that reaches a receiver is retryable.

export class SluiceError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The data itself is wrong: retrying the same bytes can never succeed. */
export class PermanentError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_PERMANENT', message, options);
  }
}

/** A transient failure: the sender should try again later. */
export class RetryableError extends SluiceError {
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options?: { cause?: unknown; retryAfterMs?: number; code?: string }) {
    super(options?.code ?? 'SLUICE_ERR_RETRYABLE', message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/**
 * Backpressure: a queue configured to refuse is full, or the process is over
 * its memory limit. Receivers answer HTTP 429 / gRPC RESOURCE_EXHAUSTED.
 */
export class ResourceExhaustedError extends RetryableError {
  constructor(message: string, options?: { retryAfterMs?: number }) {
    super(message, { ...options, code: 'SLUICE_ERR_RESOURCE_EXHAUSTED' });
  }
}

/** A malformed request body (bad protobuf, bad JSON, wrong shape). */
export class MalformedDataError extends PermanentError {
  override readonly code = 'SLUICE_ERR_MALFORMED';
}

/** The configuration is invalid; `problems` each name a YAML path. */
export class ConfigError extends SluiceError {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super('SLUICE_ERR_CONFIG', problems.join('\n'));
    this.problems = problems;
  }
}

export function isPermanent(err: unknown): err is PermanentError {
  return err instanceof PermanentError;
}

export function isResourceExhausted(err: unknown): err is ResourceExhaustedError {
  return err instanceof ResourceExhaustedError;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A graph's start was given up between two components because the service is stopping; what had started was stopped. */
export class StartAbandonedError extends SluiceError {
  constructor() {
    super('SLUICE_ERR_START_ABANDONED', 'the start was abandoned: the service is stopping');
  }
}

/** The drains exporter is stopping (a reload or shutdown swaps it): nothing was changed; try again. */
export class DrainsStoppingError extends SluiceError {
  constructor(message: string) {
    super('SLUICE_ERR_DRAINS_STOPPING', message);
  }
}

/** The drain a change names is not there (never was, or another request deleted it first); nothing was changed. */
export class DrainNotFoundError extends SluiceError {
  constructor(id: string) {
    super('SLUICE_ERR_DRAIN_NOT_FOUND', `drain ${id} does not exist`);
  }
}

/** A create would take the drains past their limit; nothing was created. */
export class DrainLimitError extends SluiceError {
  constructor(message: string) {
    super('SLUICE_ERR_DRAIN_LIMIT', message);
  }
}

/** Shared state cannot be changed now (Redis is unreachable); nothing was changed. */
export class ClusterUnavailableError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_CLUSTER_UNAVAILABLE', message, options);
  }
}

/** Errno codes of a write refused for want of room: the disk is full (blocks or inodes), a quota is reached, or the file size limit. */
const NO_ROOM_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

export function isNoRoom(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && NO_ROOM_CODES.has(code);
}

/**
 * A state file could not be written (a full disk, an I/O error); the file and
 * what was read from it are unchanged. `full` says the storage had no room.
 */
export class StorageWriteError extends SluiceError {
  readonly full: boolean;

  constructor(message: string, options: { cause: unknown }) {
    super('SLUICE_ERR_STORAGE_WRITE', message, options);
    this.full = isNoRoom(options.cause);
  }
}

/** A stored state file exists but cannot be used; the start stops with it. */
export class StateFileError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_STATE_FILE', message, options);
  }
}
