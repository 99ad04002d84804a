// `host:port` endpoints as the collector writes them; IPv6 hosts in brackets.

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

const ENDPOINT = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/;

export function parseEndpoint(text: string): Endpoint | undefined {
  const match = ENDPOINT.exec(text.trim());
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { host: match[1] ?? match[2] ?? '', port };
}

export function formatEndpoint(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
