import { SluiceError } from '../core/errors.js';

/** Shared state cannot be changed now (Redis is unreachable); nothing was changed. */
export class ClusterUnavailableError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_CLUSTER_UNAVAILABLE', message, options);
  }
}

/** A stored state file exists but cannot be used; the start stops with it. */
export class StateFileError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_ERR_STATE_FILE', message, options);
  }
}
