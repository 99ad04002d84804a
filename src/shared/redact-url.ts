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
  return SECRET_PARAM.test(decoded(encodedName).toLowerCase().replace(/[-.]/g, '_'));
}

/** A query pair's value (as written) when its name is a secret parameter's and it has one. */
function secretValue(pair: string): string | undefined {
  const eq = pair.indexOf('=');
  if (eq === -1 || eq === pair.length - 1 || !isSecretParam(pair.slice(0, eq))) return undefined;
  return pair.slice(eq + 1);
}

/** The query (`?a=1&b=2`, or '') with the values of secret parameters replaced; every other byte as given. */
function redactQuery(search: string): string {
  if (search.length <= 1) return search;
  const pairs = search.slice(1).split('&');
  const redacted = pairs.map((pair) => {
    const value = secretValue(pair);
    return value === undefined ? pair : `${pair.slice(0, pair.length - value.length)}${REDACTED}`;
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

/** The credentials redactUrl hides in `url` (the password, a user name given alone, the values of secret query parameters), as written and decoded. */
function urlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const encoded: string[] = [];
  if (parsed.password !== '') encoded.push(parsed.password);
  else if (parsed.username !== '') encoded.push(parsed.username);
  for (const pair of parsed.search.slice(1).split('&')) {
    const value = secretValue(pair);
    if (value !== undefined) encoded.push(value);
  }
  return encoded.flatMap((secret) => [secret, decoded(secret)]);
}

/**
 * Header values are as secret as the URL's credentials (the API never shows
 * them). A value written `<scheme> <credentials>` (`Bearer sk-...`) is
 * echoed by some destinations without its scheme, so the credentials count
 * alone too. Values shorter than this carry no secret worth hiding, and
 * hiding them would turn every `1` or `on` of a destination's message into `***`.
 */
const MIN_HEADER_SECRET_LENGTH = 4;

function valueSecrets(values: Iterable<string>): string[] {
  const secrets: string[] = [];
  for (const value of values) {
    const trimmed = value.trim();
    const credentials = /^[A-Za-z][\w.+-]*\s+(\S+)$/.exec(trimmed)?.[1];
    for (const secret of [trimmed, credentials]) if (secret !== undefined && secret.length >= MIN_HEADER_SECRET_LENGTH) secrets.push(secret);
  }
  return secrets;
}

/** Replaces each secret wherever it occurs in a text, the longest first (one may contain another). */
function redactorOf(secrets: readonly string[]): (text: string) => string {
  const ordered = [...new Set(secrets)].filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (text) => text;
  return function redactSecrets(text) {
    let out = text;
    for (const secret of ordered) out = out.replaceAll(secret, REDACTED);
    return out;
  };
}

/**
 * A function that replaces, wherever they occur in a text, the credentials
 * redactUrl hides in `url` and the values of the headers sent with each
 * request: a destination's answer may echo the request's URL back, whole or
 * in part, and one that refuses a key may say which key it refused.
 */
export function deliverySecretsRedactor(url: string, headers: Readonly<Record<string, string>>): (text: string) => string {
  return credentialsRedactor(url, Object.values(headers));
}

/**
 * The same for any account at `url`: its URL's credentials and `values`
 * (header values, keys), each also without a `<scheme> ` before it.
 */
export function credentialsRedactor(url: string, values: Iterable<string>): (text: string) => string {
  return redactorOf([...urlSecrets(url), ...valueSecrets(values)]);
}

function decoded(component: string): string {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return component;
  }
}

/** The URL's origin, or undefined for text that is not a URL. */
export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The encoded value of the first query parameter named `name` in `search`, or undefined. */
function queryValue(search: string, name: string): string | undefined {
  for (const pair of search.slice(1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq) === name) return pair.slice(eq + 1);
  }
  return undefined;
}

/**
 * What a client meant by `given` for a URL stored as `stored`: the stored URL
 * when `given` is its redacted form (echoed back unchanged), or `given` with
 * each `***` it keeps in place of a credential (password, user name, secret
 * query value) put back from `stored`, as when a form shows the redacted URL
 * and only its path is edited. A `***` is put back only for the same origin:
 * a credential is never carried to another host. `problem` says why `given`
 * cannot be used (a `***` with nothing to stand for).
 */
export function unredactUrl(given: string, stored: string): { url: string } | { problem: string } {
  if (given === stored || given === redactUrl(stored)) return { url: stored };
  let parsed: URL;
  try {
    parsed = new URL(given);
  } catch {
    return { url: given };
  }
  const placeholders = parsed.password === REDACTED || parsed.username === REDACTED || parsed.search.split(/[?&]/).some((pair) => pair.endsWith(`=${REDACTED}`));
  if (!placeholders) return { url: given };
  if (originOf(stored) !== parsed.origin) {
    return { problem: `\`${REDACTED}\` stands for a stored credential, which is not carried to another origin (${parsed.origin}); write the credential in full` };
  }
  const old = new URL(stored);
  if (parsed.password === REDACTED) {
    if (old.password === '') return { problem: `the URL's password is \`${REDACTED}\` but the stored URL has none; write it in full` };
    parsed.password = old.password;
  } else if (parsed.username === REDACTED) {
    if (old.username === '' || old.password !== '') return { problem: `the URL's user name is \`${REDACTED}\` but the stored URL has no credential there; write it in full` };
    parsed.username = old.username;
  }
  if (parsed.search.length > 1) {
    const pairs = parsed.search.slice(1).split('&');
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i] ?? '';
      if (!pair.endsWith(`=${REDACTED}`)) continue;
      const name = pair.slice(0, pair.length - REDACTED.length - 1);
      const value = queryValue(old.search, name);
      if (value === undefined || value === REDACTED) return { problem: `the query parameter ${name} is \`${REDACTED}\` but the stored URL has no value for it; write it in full` };
      pairs[i] = `${name}=${value}`;
    }
    parsed.search = `?${pairs.join('&')}`;
  }
  return { url: parsed.href };
}
