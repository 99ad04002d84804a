// The admin APIs as the console calls them: the admin key from this tab's
// sessionStorage (gone when the tab closes), JSON in and out, and API errors
// kept whole so each problem can be shown next to its field.
const KEY_ITEM = 'sluice.adminKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** `path: message` lines, as the API reports them. */
    readonly problems: string[],
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { message?: string; problems?: string[] };
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/**
 * How long a read (a screen's poll, the sign-in's check) waits: a hung daemon
 * keeps its connections open, and a screen would go on showing old numbers as
 * current. Changes are not timed out: a test delivery takes up to the drains'
 * own `timeout`.
 */
export const READ_TIMEOUT_MS = 10_000;

/**
 * Calls an admin API. With `timeoutMs`, a daemon that has not answered (body
 * included) by then fails the call: one that is hung, or a network that drops
 * its packets, never closes the connection, and the page would wait for ever.
 */
export async function api<T>(method: string, path: string, body?: unknown, key: string | null = storedKey(), timeoutMs?: number): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${key ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  let text: string;
  try {
    // Relative to the page: behind a proxy that serves the console under /sluice/, the APIs are there too.
    res = await fetch(`.${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
    });
    text = await res.text();
  } catch (err) {
    if (err instanceof DOMException && err.name === 'TimeoutError') {
      throw new Error(`The admin endpoint did not answer within ${(timeoutMs ?? 0) / 1000} s. Is the daemon stopped or overloaded?`);
    }
    // Stopped, restarting or out of reach: say so, not only the browser's "Failed to fetch".
    throw new Error(`Could not reach the admin endpoint (${err instanceof Error ? err.message : String(err)}). Is the daemon running?`);
  }
  if (res.status === 204) return undefined as T;
  // A proxy in front of the daemon may answer with a page of its own.
  const parsed: unknown = text === '' ? undefined : parseJson(text);
  if (parsed === NOT_JSON) {
    const message = `HTTP ${res.status} without a JSON body (is something else answering at this address?)`;
    throw new ApiError(res.status, message, [message]);
  }
  if (!res.ok) {
    const error = (parsed as ErrorBody | undefined)?.error;
    const message = error?.message ?? `HTTP ${res.status}`;
    throw new ApiError(res.status, message, error?.problems ?? [message]);
  }
  return parsed as T;
}

/** Splits `sampling[2].rate: must be ...` into its path and message. */
export function splitProblem(problem: string): { path: string; message: string } {
  const colon = problem.indexOf(': ');
  return colon < 0 ? { path: '', message: problem } : { path: problem.slice(0, colon), message: problem.slice(colon + 2) };
}
