// Bind failures read the same for both transports:
// "receivers.otlp: cannot listen on 127.0.0.1:4318: EADDRINUSE"; the full
// error stays as the cause.

const ERRNO_CODE = /\b(E[A-Z]{3,})\b/;

export class ListenError extends Error {
  readonly code = 'SLUICE_ERR_LISTEN';

  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'ListenError';
  }
}

export function listenError(id: string, endpoint: string, cause: unknown): ListenError {
  const text = cause instanceof Error ? cause.message : String(cause);
  const errno = (cause as { code?: unknown } | null)?.code;
  const code = typeof errno === 'string' ? errno : ERRNO_CODE.exec(text)?.[1];
  const detail = code ?? text;
  return new ListenError(`receivers.${id}: cannot listen on ${endpoint}: ${detail}`, { cause });
}
