// Credentials written into a URL are secrets like a header value: answers and
// logs show the URL with them replaced, and a client that sends the redacted
// URL back means "unchanged". A URL carries them in its userinfo (the
// password, or a user name alone, as in `https://TOKEN@host`) or in query
// parameters named for them (`?api_key=...`, `&X-Amz-Signature=...`).

export const REDACTED = '***';

/**
 * Query parameter names that hold credentials, compared lower-case with `-`
 * and `.` read as `_`: a name that is one of these words, or ends in `_` and
 * one of them (`dd_api_key`, `x_amz_signature`, `access_token`).
 */
const SECRET_WORDS = ['key', 'apikey', 'api_key', 'token', 'secret', 'password', 'passwd', 'pwd', 'signature', 'sig', 'auth', 'authorization', 'credential', 'credentials', 'session'];
const SECRET_PARAM = new RegExp(`(?:^|_)(?:${SECRET_WORDS.join('|')})$`);

function isSecretParam(encodedName: string): boolean {
  let name: string;
  try {
    name = decodeURIComponent(encodedName.replace(/\+/g, ' '));
  } catch {
    name = encodedName;
  }
  return SECRET_PARAM.test(name.toLowerCase().replace(/[-.]/g, '_'));
}

/** The query (`?a=1&b=2`, or '') with the values of secret parameters replaced; every other byte as given. */
function redactQuery(search: string): string {
  if (search.length <= 1) return search;
  const pairs = search.slice(1).split('&');
  const redacted = pairs.map((pair) => {
    const eq = pair.indexOf('=');
    if (eq === -1 || eq === pair.length - 1) return pair;
    return isSecretParam(pair.slice(0, eq)) ? `${pair.slice(0, eq + 1)}${REDACTED}` : pair;
  });
  return `?${redacted.join('&')}`;
}

/** `url` with its credentials (see the top of this file) replaced by `***`; any other string as given. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const search = redactQuery(parsed.search);
  if (parsed.username === '' && parsed.password === '' && search === parsed.search) return url;
  if (parsed.password !== '') parsed.password = REDACTED;
  else if (parsed.username !== '') parsed.username = REDACTED;
  parsed.search = search;
  return parsed.href;
}

/** The stored URL when `given` is its redacted form (a client echoing what it was shown), else `given`. */
export function unredactUrl(given: string, stored: string): string {
  return given !== stored && given === redactUrl(stored) ? stored : given;
}
