// read_timeout on the gRPC listener: a call's request must have arrived
// whole (its message and the client's half-close) within read_timeout of the
// call's start. A call that has not is answered DEADLINE_EXCEEDED, what it
// sends afterwards is dropped, and its HTTP/2 stream is reset (NO_ERROR, as
// RFC 9113 8.1 lets a server that has answered ask the client to stop), so a
// client trickling a message never holds a stream, or keeps its connection
// from counting as idle, for longer than that.
import { constants as http2 } from 'node:http2';
import { ServerInterceptingCall, status, type ServerInterceptingCallInterface, type ServerInterceptor } from '@grpc/grpc-js';
import { callStream } from './grpc-call-stream.js';

export function readTimeoutInterceptor(timeoutMs: number): ServerInterceptor {
  const details = `the request was not received whole within read_timeout (${timeoutMs} ms)`;
  return function readTimeout(_method, inner) {
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    function stop(): void {
      clearTimeout(timer);
      timer = undefined;
    }
    const call: ServerInterceptingCall = new ServerInterceptingCall(inner, {
      start(next) {
        timer = setTimeout(function expire() {
          timer = undefined;
          expired = true;
          call.sendStatus({ code: status.DEADLINE_EXCEEDED, details });
          setImmediate(resetStream, inner);
        }, timeoutMs);
        next({
          onReceiveMessage(message, nextMessage) {
            if (!expired) nextMessage(message);
          },
          onReceiveHalfClose(nextHalfClose) {
            stop();
            if (!expired) nextHalfClose();
          },
          onCancel: stop,
        });
      },
      sendStatus(callStatus, next) {
        stop();
        next(callStatus);
      },
    });
    return call;
  };
}

/** Resets the call's HTTP/2 stream once its answer is sent; where grpc-js keeps it out of reach, the answer still stands and the connection's own limits apply. */
function resetStream(inner: ServerInterceptingCallInterface): void {
  const stream = callStream(inner);
  if (stream !== undefined && !stream.closed) stream.close(http2.NGHTTP2_NO_ERROR);
}
