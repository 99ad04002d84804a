// receivers.otlp.auth on gRPC: the `authorization` metadata is checked as
// the call's metadata arrives, as OTLP/HTTP checks the header before it
// reads the body. A call without a known key is answered UNAUTHENTICATED
// whatever it sends next (no message, two of them, bytes that are no
// ExportTraceServiceRequest), its messages never reach the handler, and it is
// counted once, as unauthenticated.
import { ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';
import type { BearerKeys } from '../../core/listener/bearer.js';

export const UNAUTHENTICATED_DETAILS = 'missing or unknown API key: send authorization: Bearer <key> metadata';

export function authInterceptor(keys: BearerKeys, refused: () => void): ServerInterceptor {
  return function authenticate(_method, inner) {
    let known = false;
    const call: ServerInterceptingCall = new ServerInterceptingCall(inner, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            const presented = metadata.get('authorization')[0];
            known = keys.accepts(typeof presented === 'string' ? presented : undefined);
            if (known) return nextMetadata(metadata);
            refused();
            call.sendStatus({ code: status.UNAUTHENTICATED, details: UNAUTHENTICATED_DETAILS });
          },
          onReceiveMessage(message, nextMessage) {
            if (known) nextMessage(message);
          },
          onReceiveHalfClose(nextHalfClose) {
            if (known) nextHalfClose();
          },
        });
      },
    });
    return call;
  };
}
