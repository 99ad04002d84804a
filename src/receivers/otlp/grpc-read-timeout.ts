// read_timeout on the gRPC listener: a call's request must have arrived
// whole (its message and the client's half-close) within read_timeout of the
// call's start. A call that has not is answered DEADLINE_EXCEEDED, what it
// sends afterwards is dropped, and its HTTP/2 stream is reset (as every call
// answered before its client is done, grpc-call-end.ts), so a client trickling
// a message never holds a stream, or keeps its connection from counting as
// idle, for longer than that.
import { ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';

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
