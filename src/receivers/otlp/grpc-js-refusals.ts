// grpc-js answers some calls itself, while it reads their frames and before
// any interceptor or the Export handler sees a message: one over
// max_recv_msg_size, as sent or once decompressed (RESOURCE_EXHAUSTED), one
// that does not decompress (INTERNAL). Those answers pass through no
// interceptor: grpc-js writes them on the call's HTTP/2 stream, then tells the
// listeners the call was cancelled. This interceptor is the innermost, so
// every answer Sluice sends passes through it; a call that ends without one
// was answered by grpc-js (or cancelled by its client, which got no answer),
// and the status read back from the stream is counted as the HTTP receiver
// counts its 413 (too_large) and its bodies that do not decompress (malformed).
// An unknown grpc-encoding (UNIMPLEMENTED) is HTTP's 415, which goes uncounted.
import type { OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';
import { callStream } from './grpc-call-stream.js';
import type { RefusalReason } from './outcome.js';

const REASONS: ReadonlyMap<number, RefusalReason> = new Map([
  [status.RESOURCE_EXHAUSTED, 'too_large'],
  [status.INTERNAL, 'malformed'],
]);

export function grpcJsRefusalInterceptor(refused: (reason: RefusalReason) => void): ServerInterceptor {
  return function countGrpcJsRefusal(_method, inner) {
    let answered = false;
    const call: ServerInterceptingCall = new ServerInterceptingCall(inner, {
      start(next) {
        next({
          onCancel() {
            if (!answered) countAnswer();
          },
        });
      },
      sendStatus(callStatus, next) {
        answered = true;
        next(callStatus);
      },
    });
    function countAnswer(): void {
      const reason = REASONS.get(sentStatus(callStream(inner)) ?? status.OK);
      if (reason !== undefined) refused(reason);
    }
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
