// A listener that cannot bind is named by the config key of its endpoint, the
// same way for every listener and transport:
// "receivers.otlp.protocols.http.endpoint: cannot listen on 127.0.0.1:4318:
// address already in use (EADDRINUSE)"; the bind error stays as the cause.

const ERRNO_CODE = /\b(E[A-Z]{3,})\b/;

/** What the usual bind failures mean, in the operator's terms. */
const ERRNO_MEANING: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'no interface of this machine has that address',
};

export class ListenError extends Error {
  readonly code = 'SLUICE_ERR_LISTEN';

  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'ListenError';
  }
}

/** `path`: the YAML path of the listener's endpoint (`service.admin.endpoint`). */
export function listenError(path: string, endpoint: string, cause: unknown): ListenError {
  const text = cause instanceof Error ? cause.message : String(cause);
  const errno = (cause as { code?: unknown } | null)?.code;
  const code = typeof errno === 'string' ? errno : ERRNO_CODE.exec(text)?.[1];
  const meaning = code === undefined ? undefined : ERRNO_MEANING[code];
  const detail = meaning === undefined ? (code ?? text) : `${meaning} (${code})`;
  return new ListenError(`${path}: cannot listen on ${endpoint}: ${detail}`, { cause });
}
