// A TCP server that accepts connections and never says a word: a TLS
// handshake there never completes, the case undici's connect timeout would
// otherwise run out on.
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface SilentServer {
  readonly port: number;
  /** Connections still open. */
  open(): number;
  /** Destroys what is open and stops listening. */
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const server = createServer(function silent(socket) {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    open: () => sockets.size,
    close: async function close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
