// idle_timeout as a deadline counted from a connection's last answer, not
// only as an inactivity timer. Node closes a kept-alive connection after
// idle_timeout without a byte, but bytes that begin no request (the empty
// lines RFC 9112 2.2 lets a client send before a request line) restart that
// timer, and Node's header timeout runs only once a request has begun: a
// client sending "\r\n" every few seconds held its connection, and a
// max_connections slot, for ever. Go's server (the collector's) takes any
// byte for the next request's start and gives it the header timeout.
//
// Here a connection with no request in flight for idle_timeout +
// read_header_timeout since its last answer is closed: a request begun within
// idle_timeout has until then to send its headers before Node answers it 408
// anyway, so no request Node would take is cut.
//
// The same accounting tells which connections a stopping listener may close
// as idle (closeIdle): Node's closeIdleConnections() takes a connection whose
// answer is ended as idle while that answer is still being written, and
// destroys it with the rest of the answer unsent (a reload cut a slow
// reader's answer; an OTLP 200 written as the sweep ran could reach its
// client as a reset, and the client send again spans already queued). It
// also spares a connection answered moments ago: its client, told the
// connection stays open, may be sending the next request on it right now,
// and would get a reset where the stopping listener answers it (with
// `Connection: close`) if it is left a little longer.
//
// Bytes read since the last answer keep a stopping listener's connection open
// only while they may be a request's start: a client sending blank lines held
// a reload or a shutdown until its grace was over. So a connection whose
// unanswered bytes a stop sweep first saw `beginMs` ago and that has no
// request yet is closed: as in Go's server, the first byte starts the header
// timeout, and `beginMs` (read_header_timeout and one of Node's timeout
// checks) lets Node answer a begun request that is late with its headers 408
// first, itself.
import type { Server, Socket } from 'node:net';

interface Requests {
  inFlight: number;
  /** When the connection was accepted (ms). */
  readonly openedAt: number;
  /** When the last one was answered (ms); Infinity before the first, when Node's header timeout covers the connection. */
  idleSince: number;
  /** The connection's bytesRead when the last one was answered: more since means a request has begun. */
  readAtIdle: number;
  /** When a stop sweep first saw bytes past readAtIdle with no request in flight (ms); Infinity until then. */
  unansweredSince: number;
}

export class KeepAliveDeadline {
  readonly #connections = new Map<Socket, Requests>();
  readonly #limitMs: number;
  readonly #beginMs: number;

  /**
   * `secure`: requests arrive on the TLS sockets, not on the TCP ones under them. `limitMs` Infinity: no deadline.
   * `beginMs`: how long, once stopping, bytes that begin no request keep a connection.
   */
  constructor(server: Server, limitMs: number, beginMs: number, secure: boolean) {
    this.#limitMs = limitMs;
    this.#beginMs = beginMs;
    const connections = this.#connections;
    server.on(secure ? 'secureConnection' : 'connection', function watch(socket: Socket) {
      connections.set(socket, { inFlight: 0, openedAt: Date.now(), idleSince: Infinity, readAtIdle: 0, unansweredSince: Infinity });
      socket.once('close', function forget() {
        connections.delete(socket);
      });
    });
  }

  requestStarted(socket: Socket): void {
    const requests = this.#connections.get(socket);
    if (requests !== undefined) requests.inFlight += 1;
  }

  requestEnded(socket: Socket): void {
    const requests = this.#connections.get(socket);
    if (requests === undefined) return;
    requests.inFlight -= 1;
    if (requests.inFlight === 0) {
      requests.idleSince = Date.now();
      requests.readAtIdle = socket.bytesRead;
      requests.unansweredSince = Infinity;
    }
  }

  /** Destroys the connections past their deadline. */
  sweep(): void {
    const before = Date.now() - this.#limitMs;
    for (const [socket, requests] of this.#connections) {
      if (requests.inFlight === 0 && requests.idleSince < before) socket.destroy();
    }
  }

  /**
   * Destroys the connections between requests for at least `quietMs`: every
   * answer written out (its response's 'close', which comes once the last
   * byte is handed to the kernel), no byte read since, and nothing answered
   * (or, for a connection yet to send its first request, accepted) in the
   * last `quietMs`, so no answer, no begun request and no request a client
   * is sending on a connection it was just told stays open is cut.
   *
   * "No byte read" is confirmed only once the loop has read what the kernel
   * holds: a request that arrived while the loop was busy (a reload building
   * its graph) is still unread when the stop runs, and destroying its
   * connection then resets it. So the connections found idle are destroyed
   * after the next full poll of the loop (its second check phase from now),
   * if they are idle still.
   *
   * Also destroys, the same way, the connections holding bytes that have
   * begun no request `beginMs` after a call first saw them (blank lines).
   */
  closeIdle(quietMs = 0): void {
    const idle = [...this.#connections.keys()].filter((socket) => this.#idleFor(socket, quietMs) || this.#beginsNoRequest(socket));
    if (idle.length === 0) return;
    const confirm = (): void => {
      for (const socket of idle) if (this.#idleFor(socket, quietMs) || this.#beginsNoRequest(socket)) socket.destroy();
    };
    setImmediate(function afterThisTurn() {
      setImmediate(confirm);
    });
  }

  #idleFor(socket: Socket, quietMs: number): boolean {
    const requests = this.#connections.get(socket);
    if (requests === undefined || requests.inFlight > 0 || socket.bytesRead !== requests.readAtIdle) return false;
    const quietSince = requests.idleSince === Infinity ? requests.openedAt : requests.idleSince;
    return quietSince <= Date.now() - quietMs;
  }

  /** Notes when unanswered bytes are first seen; true once they have begun no request for `beginMs` since. */
  #beginsNoRequest(socket: Socket): boolean {
    const requests = this.#connections.get(socket);
    if (requests === undefined || requests.inFlight > 0 || socket.bytesRead === requests.readAtIdle) return false;
    const now = Date.now();
    if (requests.unansweredSince === Infinity) requests.unansweredSince = now;
    return requests.unansweredSince <= now - this.#beginMs;
  }
}
