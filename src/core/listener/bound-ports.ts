// Listening sockets that outlive the listeners using them, so a reload never
// closes a port that the new config listens on too. A listener's own server
// (http, https, tls, net) never binds: the port's socket accepts each
// connection unread (pauseOnConnect) and hands it to the listener attached
// now. A reload stops the old graph's listeners (each detaches) and starts
// the new graph's (each attaches to the port its endpoint names); a
// connection made in between waits, unread, for the next listener, where
// before it was refused. The collector closes its listeners on every
// reload; a sidecar's clients then see refused connections and, for the
// SDKs that retry only on answers, lose their spans.
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { listenOn } from './connections.js';
import { formatEndpoint, type Endpoint } from './endpoint.js';

/** One bound socket; `attach` gives its connections to a listener's server. */
export class BoundPort {
  readonly #server: NetServer;
  readonly #held = new Set<Socket>();
  /** The server connections go to; undefined while none is attached (they are held). */
  #target: NetServer | undefined;
  /** The last server attached, which counts the connections refused past max_connections. */
  #counter: NetServer | undefined;
  #address: Endpoint | undefined;
  /** Claimed by a listener, from its claim until it detaches. */
  #reserved = false;
  #closed = false;

  private constructor() {
    this.#server = createNetServer({ pauseOnConnect: true });
    this.#server.on('connection', (socket: Socket) => {
      if (this.#target === undefined) this.#hold(socket);
      else handTo(this.#target, socket);
    });
    this.#server.on('drop', (data: unknown) => this.#counter?.emit('drop', data));
  }

  /**
   * Binds `endpoint`; rejects with the bind error (EADDRINUSE, ...). As many
   * connections as `maxConnections` may wait to be accepted (the backlog is
   * fixed by the first bind: a reload that changes max_connections keeps it).
   */
  static async bind(endpoint: Endpoint, maxConnections: number): Promise<BoundPort> {
    const port = new BoundPort();
    port.#server.maxConnections = maxConnections;
    port.#address = await listenOn(port.#server, endpoint);
    // A failed accept (EMFILE) loses that connection only; the socket keeps listening.
    port.#server.on('error', function acceptFailed() {});
    return port;
  }

  /** The bound address (port 0 resolved). */
  get address(): Endpoint {
    if (this.#address === undefined) throw new Error('a BoundPort is bound before it is handed out');
    return this.#address;
  }

  get reserved(): boolean {
    return this.#reserved;
  }

  /** Marks the port taken by one listener; a second claim is refused as binding it twice would be. */
  reserve(endpoint: Endpoint): void {
    if (this.#reserved) throw addressInUse(endpoint);
    this.#reserved = true;
  }

  /**
   * Sends every connection, from now and held ones, to `target`, which caps
   * them at its maxConnections. `target` is told it is listening: Node's
   * http server starts its header and request timeout checks then.
   */
  attach(target: NetServer): void {
    if (this.#closed) throw new Error('a closed port cannot be attached');
    this.#target = target;
    this.#counter = target;
    this.#server.maxConnections = target.maxConnections;
    target.emit('listening');
    for (const socket of this.#held) handTo(target, socket);
    this.#held.clear();
  }

  /** Gives the port up: connections from now wait for the next listener's attach (or are destroyed by close). */
  detach(target: NetServer): void {
    if (this.#target !== undefined && this.#target !== target) return;
    this.#target = undefined;
    this.#reserved = false;
  }

  /** Stops listening and destroys the connections held; those handed out stay their servers'. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#target = undefined;
    this.#server.close();
    for (const socket of this.#held) socket.destroy();
    this.#held.clear();
  }

  #hold(socket: Socket): void {
    const held = this.#held;
    held.add(socket);
    socket.once('close', function forget() {
      held.delete(socket);
    });
  }
}

function handTo(server: NetServer, socket: Socket): void {
  server.emit('connection', socket);
  socket.resume();
}

/**
 * The service's bound ports, kept across reloads. A listener claims its
 * endpoint's port; after a start or reload, `settle` closes the ports no
 * listener of the new graph claimed.
 */
export class PortKeeper {
  readonly #ports = new Map<string, BoundPort>();

  /**
   * The port a listener named `name` listens on at `endpoint`: the one kept
   * from the previous graph, or a new bind. Port 0 (any free port) is kept
   * per listener name, so a reload gives a listener the port it had.
   */
  async claim(name: string, endpoint: Endpoint, maxConnections: number): Promise<BoundPort> {
    const key = endpoint.port === 0 ? `${name} ${formatEndpoint(endpoint.host, 0)}` : formatEndpoint(endpoint.host, endpoint.port);
    const kept = this.#ports.get(key);
    if (kept !== undefined) {
      kept.reserve(endpoint);
      return kept;
    }
    // A kept port the new config names under another host (0.0.0.0 and 127.0.0.1 alike) would stop the bind.
    this.free(endpoint.port);
    const port = await BoundPort.bind(endpoint, maxConnections);
    port.reserve(endpoint);
    this.#ports.set(key, port);
    return port;
  }

  /**
   * Closes the ports no listener holds on port number `port`, whatever their
   * host, so that something else may bind it: a new listener there, or the
   * admin endpoint a reload moved onto a receiver's old port.
   */
  free(port: number): void {
    if (port !== 0) this.#closeUnclaimed((kept) => kept.address.port === port);
  }

  /** Closes the ports no listener holds: after a start or reload, those the new config does not listen on. */
  settle(): void {
    this.#closeUnclaimed(() => true);
  }

  closeAll(): void {
    for (const port of this.#ports.values()) port.close();
    this.#ports.clear();
  }

  #closeUnclaimed(matches: (port: BoundPort) => boolean): void {
    for (const [key, port] of this.#ports) {
      if (port.reserved || !matches(port)) continue;
      port.close();
      this.#ports.delete(key);
    }
  }
}

/** A listener's hold on its port: the one its PortKeeper gives it, or one bound for it alone. */
export class ListenerPort {
  readonly #server: NetServer;
  readonly #port: BoundPort;
  readonly #owned: boolean;

  private constructor(server: NetServer, port: BoundPort, owned: boolean) {
    this.#server = server;
    this.#port = port;
    this.#owned = owned;
  }

  /**
   * Binds `endpoint` for `server`, or with `ports` takes the port a previous
   * listener there left (a reload), and attaches the server to it; a listener
   * `stopped()` while binding gives the port up at once. Rejects with the
   * bind error (EADDRINUSE, ...).
   */
  static async open(server: NetServer, name: string, endpoint: Endpoint, ports: PortKeeper | undefined, stopped: () => boolean): Promise<ListenerPort> {
    const port = ports === undefined ? await BoundPort.bind(endpoint, server.maxConnections) : await ports.claim(name, endpoint, server.maxConnections);
    const hold = new ListenerPort(server, port, ports === undefined);
    if (stopped()) hold.release();
    else port.attach(server);
    return hold;
  }

  get address(): Endpoint {
    return this.#port.address;
  }

  /** Detaches from the port (kept for the next listener there) and closes one bound for this listener alone. */
  release(): void {
    this.#port.detach(this.#server);
    if (this.#owned) this.#port.close();
  }
}

/** What binding a port twice gives, for a port this keeper already holds. */
function addressInUse(endpoint: Endpoint): Error {
  const error = new Error(`listen EADDRINUSE: address already in use ${formatEndpoint(endpoint.host, endpoint.port)}`) as Error & { code: string };
  error.code = 'EADDRINUSE';
  return error;
}
