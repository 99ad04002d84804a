// The innermost interceptor: every answer Sluice sends passes through it, and
// it sees how each call ends.
//
// grpc-js answers some calls itself, while it reads their frames and before
// any interceptor or the Export handler sees a message: one over
// max_recv_msg_size, as sent or once decompressed (RESOURCE_EXHAUSTED), one
// that does not decompress (INTERNAL). Those answers pass through no
// interceptor: grpc-js writes them on the call's HTTP/2 stream, then tells the
// listeners the call was cancelled. A call that ends without an answer from
// Sluice was answered by grpc-js (or cancelled by its client, which got no
// answer), and the status read back from the stream is counted as the HTTP
// receiver counts its 413 (too_large) and its bodies that do not decompress
// (malformed). An unknown grpc-encoding (UNIMPLEMENTED) is HTTP's 415, which
// goes uncounted.
//
// A call answered before its client has sent all of its request (refused on
// its metadata, over the size limit, out of read_timeout) has its stream reset
// once the answer is out (NO_ERROR, as RFC 9113 8.1 lets a server that has
// answered ask the client to stop, and as grpc-go does): what the client sends
// after is not read, and the stream no longer counts against
// max_concurrent_streams or keeps the connection from counting as idle.
import { constants as http2, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { ServerInterceptingCall, status, type ServerInterceptingCallInterface, type ServerInterceptor } from '@grpc/grpc-js';
import type { RefusalReason } from './outcome.js';

const REASONS: ReadonlyMap<number, RefusalReason> = new Map([
  [status.RESOURCE_EXHAUSTED, 'too_large'],
  [status.INTERNAL, 'malformed'],
]);

export function callEndInterceptor(refused: (reason: RefusalReason) => void): ServerInterceptor {
  return function callEnd(_method, inner) {
    let answered = false;
    const call: ServerInterceptingCall = new ServerInterceptingCall(inner, {
      start(next) {
        next({
          onCancel() {
            if (answered) return;
            const reason = REASONS.get(sentStatus(baseStream(inner)) ?? status.OK);
            if (reason !== undefined) refused(reason);
            setImmediate(resetUnfinished, inner);
          },
        });
      },
      sendStatus(callStatus, next) {
        answered = true;
        next(callStatus);
        setImmediate(resetUnfinished, inner);
      },
    });
    return call;
  };
}

/** The grpc-status written on the stream (in its trailers, or its headers for a trailers-only answer); undefined when none was. */
function sentStatus(stream: ServerHttp2Stream | undefined): number | undefined {
  // Both are undefined until sent, whatever Node's types say.
  const trailers: OutgoingHttpHeaders | undefined = stream?.sentTrailers;
  const headers: OutgoingHttpHeaders | undefined = stream?.sentHeaders;
  const sent = trailers?.['grpc-status'] ?? headers?.['grpc-status'];
  return sent === undefined ? undefined : Number(sent);
}

/** Resets the stream of an answered call whose client has not ended its side. */
function resetUnfinished(inner: ServerInterceptingCallInterface): void {
  const stream = baseStream(inner);
  if (stream !== undefined && !stream.closed && !stream.readableEnded) stream.close(http2.NGHTTP2_NO_ERROR);
}

/**
 * The call's HTTP/2 stream. grpc-js keeps it in its own call object, which
 * this interceptor (the innermost) wraps, and offers no public way to it;
 * where it is not found (another grpc-js), nothing is counted or reset and
 * every call is answered as before.
 */
function baseStream(inner: ServerInterceptingCallInterface): ServerHttp2Stream | undefined {
  const stream: unknown = Reflect.get(inner, 'stream');
  return isServerStream(stream) ? stream : undefined;
}

function isServerStream(value: unknown): value is ServerHttp2Stream {
  return typeof value === 'object' && value !== null && 'rstCode' in value && 'sentHeaders' in value && 'close' in value && typeof value.close === 'function';
}
