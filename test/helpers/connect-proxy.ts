// A forward proxy that tunnels HTTP CONNECT requests, as corporate proxies
// do, and records the targets it was asked for.
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface ConnectProxy {
  readonly url: string;
  /** host:port of each CONNECT, in order. */
  readonly targets: string[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(function tunnel(client) {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let head = '';
    client.on('data', function readHead(chunk: Buffer) {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      client.off('data', readHead);
      const target = /^CONNECT (\S+) HTTP\/1\.[01]\r\n/.exec(head)?.[1];
      if (target === undefined) {
        client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
        return;
      }
      targets.push(target);
      const at = target.lastIndexOf(':');
      const upstream = connect(Number(target.slice(at + 1)), target.slice(0, at), () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const rest = Buffer.from(head.slice(end + 4), 'latin1');
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    close: async function close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The proxy variables as they are now; `restore()` puts them back (a test sets them for the daemon's outbound agents). */
export function saveProxyEnv(): { restore(): void } {
  const names = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
  const saved = new Map(names.map((name) => [name, process.env[name]]));
  return {
    restore() {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  };
}
