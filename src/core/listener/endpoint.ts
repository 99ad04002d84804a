// `host:port` endpoints as the collector writes them; IPv6 hosts in brackets.
// Every listener (OTLP HTTP and gRPC, gateway, admin) reads its endpoint here.
import { z } from 'zod';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

// An empty host (`:4318`) is the collector's way of saying every interface: the listener binds the unspecified address.
const ENDPOINT = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]*)):(\d{1,5})$/;

export function parseEndpoint(text: string): Endpoint | undefined {
  const match = ENDPOINT.exec(text.trim());
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { host: match[1] ?? match[2] ?? '', port };
}

/** An endpoint the config already checked (endpointText) as host and port, to listen on. */
export function listenEndpoint(text: string): Endpoint {
  const parsed = parseEndpoint(text);
  if (parsed === undefined) throw new Error(`not a host:port endpoint: ${text}`);
  return parsed;
}

export function formatEndpoint(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A config endpoint, parsed to host and port. */
export function endpointSchema() {
  return z.string({ error: 'must be a host:port string' }).transform(function toEndpoint(value, ctx): Endpoint {
    const parsed = parseEndpoint(value);
    if (parsed === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be host:port with a port from 0 to 65535 (e.g. 127.0.0.1:4318)' });
      return z.NEVER;
    }
    return parsed;
  });
}

/**
 * A config endpoint kept as its text, checked as endpointSchema checks it
 * but untrimmed (the listener reads it as written).
 */
export function endpointText(example: string) {
  return z.string({ error: 'must be a host:port string' }).refine(
    (value) => value === value.trim() && parseEndpoint(value) !== undefined,
    { error: `must be host:port with a port from 0 to 65535 (e.g. ${example})` },
  );
}
