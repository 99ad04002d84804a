// Credentials written into a URL (`https://user:pass@host/...`) are secrets
// like a header value: answers and logs show the URL with its password
// replaced, and a client that sends the redacted URL back means "unchanged".

export const REDACTED = '***';

/** `url` with its userinfo password replaced by `***`; any other string as given. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.password === '') return url;
  parsed.password = REDACTED;
  return parsed.href;
}

/** The stored URL when `given` is its redacted form (a client echoing what it was shown), else `given`. */
export function unredactUrl(given: string, stored: string): string {
  return given !== stored && given === redactUrl(stored) ? stored : given;
}
