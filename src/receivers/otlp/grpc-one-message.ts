// A unary call carries exactly one request message. grpc-js answers a call
// that ends without a whole one (no message, a frame cut short) or sends a
// second with UNIMPLEMENTED before the Export handler runs, so the receiver
// never saw them. This interceptor answers both INVALID_ARGUMENT, as the
// README promises for bad data.
//
// Only a second message is counted as malformed. A call that ends without a
// whole message is, in practice, a call its client cancelled mid-upload:
// Node's HTTP/2 client (grpc-js, so the OpenTelemetry JS exporter) cancels by
// ending its side (END_STREAM) and resetting the stream (RST_STREAM CANCEL) in
// one write, and grpc-js reports the end as a half-close well before the reset
// reaches it. Like an HTTP body cut short, which the HTTP receiver does not
// count, and as the collector (whose grpc-go never runs its handler for such
// a call) does, it goes uncounted.
import { ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';

const NO_MESSAGE = 'the call ended without a whole request message';
const SECOND_MESSAGE = 'an Export call carries one request message; a second arrived';

export function oneMessageInterceptor(malformed: () => void): ServerInterceptor {
  return function oneMessage(_method, inner) {
    let received = false;
    const call: ServerInterceptingCall = new ServerInterceptingCall(inner, {
      start(next) {
        next({
          onReceiveMessage(message, nextMessage) {
            if (received) {
              malformed();
              call.sendStatus({ code: status.INVALID_ARGUMENT, details: SECOND_MESSAGE });
              return;
            }
            received = true;
            nextMessage(message);
          },
          onReceiveHalfClose(nextHalfClose) {
            if (!received) return call.sendStatus({ code: status.INVALID_ARGUMENT, details: NO_MESSAGE });
            nextHalfClose();
          },
        });
      },
    });
    return call;
  };
}
