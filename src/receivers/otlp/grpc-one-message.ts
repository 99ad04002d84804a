// A unary call carries exactly one request message. grpc-js answers a call
// that ends without a whole one (no message, a frame cut short) or sends a
// second with UNIMPLEMENTED before the Export handler runs, so the receiver
// never saw them. Both are the sender's malformed data: this interceptor
// answers them INVALID_ARGUMENT, as the README promises for bad data, and
// reports them so that they are counted.
import { ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';

const NO_MESSAGE = 'the call ended without a whole request message';
const SECOND_MESSAGE = 'an Export call carries one request message; a second arrived';

export function oneMessageInterceptor(refused: () => void): ServerInterceptor {
  return function oneMessage(_method, inner) {
    let received = false;
    function refuse(details: string): void {
      refused();
      call.sendStatus({ code: status.INVALID_ARGUMENT, details });
    }
    const call: ServerInterceptingCall = new ServerInterceptingCall(inner, {
      start(next) {
        next({
          onReceiveMessage(message, nextMessage) {
            if (received) return refuse(SECOND_MESSAGE);
            received = true;
            nextMessage(message);
          },
          onReceiveHalfClose(nextHalfClose) {
            if (!received) return refuse(NO_MESSAGE);
            nextHalfClose();
          },
        });
      },
    });
    return call;
  };
}
