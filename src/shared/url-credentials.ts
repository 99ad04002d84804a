// Credentials written into a URL's userinfo (`https://user:password@host/...`,
// or a token as the user name alone) stand for Basic authorization, as curl
// and the collector's Go client send them; undici leaves them out of the
// request, so a sender adds the header itself.

/** The Authorization value the URL's userinfo stands for; undefined without userinfo. */
export function basicAuthorization(url: URL): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  const credentials = `${percentDecoded(url.username)}:${percentDecoded(url.password)}`;
  return `Basic ${Buffer.from(credentials).toString('base64')}`;
}

/** True when `headers` has an Authorization header, in any case. */
export function hasAuthorization(headers: Readonly<Record<string, string>>): boolean {
  return hasHeader(headers, 'authorization');
}

/** True when `headers` names `lowerName` (written in lower case), in any case. */
export function hasHeader(headers: Readonly<Record<string, string>>, lowerName: string): boolean {
  for (const name in headers) if (name.toLowerCase() === lowerName) return true;
  return false;
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a `%` that begins no escape stands for itself
  }
}
