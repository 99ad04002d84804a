// A TCP proxy in front of a real redis-server that can stall (as a hung Redis
// or a dead network path does): from a chosen command on, what clients send
// is held instead of reaching Redis. It reads the RESP commands clients send,
// so tests can count them and stall after a given number.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface StallingRedisProxy {
  readonly url: string;
  /** From now on, commands are held (and shown to `onHeld`) instead of reaching Redis. */
  stall(): void;
  /** Lets `commands` more commands through, then stalls. */
  stallAfter(commands: number): void;
  onHeld(listener: (command: string) => void): void;
  /** The commands passed to Redis and held since the proxy started, each as its arguments joined by spaces. */
  readonly forwarded: readonly string[];
  readonly held: readonly string[];
  close(): Promise<void>;
}

/** Takes the complete RESP commands (arrays of bulk strings) at the head of `buffer`; returns them and what is left. */
function takeCommands(buffer: string): { commands: Array<{ raw: string; text: string }>; rest: string } {
  const commands: Array<{ raw: string; text: string }> = [];
  let at = 0;
  for (;;) {
    const parsed = parseCommand(buffer, at);
    if (parsed === undefined) return { commands, rest: buffer.slice(at) };
    commands.push({ raw: buffer.slice(at, parsed.end), text: parsed.command });
    at = parsed.end;
  }
}

function parseCommand(buffer: string, start: number): { command: string; end: number } | undefined {
  const line = (from: number): { text: string; end: number } | undefined => {
    const crlf = buffer.indexOf('\r\n', from);
    return crlf === -1 ? undefined : { text: buffer.slice(from, crlf), end: crlf + 2 };
  };
  const header = line(start);
  if (header === undefined) return undefined;
  if (!header.text.startsWith('*')) throw new Error(`not a RESP array: ${header.text}`);
  const args: string[] = [];
  let at = header.end;
  for (let i = 0; i < Number(header.text.slice(1)); i++) {
    const length = line(at);
    if (length === undefined) return undefined;
    const end = length.end + Number(length.text.slice(1));
    if (buffer.length < end + 2) return undefined;
    args.push(buffer.slice(length.end, end));
    at = end + 2;
  }
  return { command: args.join(' '), end: at };
}

export async function stallingRedisProxy(redisPort: number): Promise<StallingRedisProxy> {
  let allowance = Infinity;
  const forwarded: string[] = [];
  const held: string[] = [];
  const listeners: Array<(command: string) => void> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    upstream.pipe(client);
    let pending = '';
    client.on('data', (data: Buffer) => {
      const { commands, rest } = takeCommands(pending + data.toString('latin1'));
      pending = rest;
      for (const { raw, text } of commands) {
        if (allowance > 0) {
          allowance--;
          forwarded.push(text);
          upstream.write(Buffer.from(raw, 'latin1'));
        } else {
          held.push(text);
          for (const listener of listeners) listener(text);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}/0`,
    stall: () => {
      allowance = 0;
    },
    stallAfter: (commands) => {
      allowance = commands;
    },
    onHeld: (listener) => listeners.push(listener),
    forwarded,
    held,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
