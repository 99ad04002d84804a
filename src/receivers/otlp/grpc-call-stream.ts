// The HTTP/2 stream under a grpc-js server call. grpc-js keeps it in its
// innermost call object (`stream`), each interceptor's call wrapping the next
// one (`nextCall`), and offers no public way to it. Where it is not found
// (another grpc-js), undefined: what the caller wanted of it is skipped and
// the call is answered as it would be anyway.
import type { ServerHttp2Stream } from 'node:http2';
import type { ServerInterceptingCallInterface } from '@grpc/grpc-js';

export function callStream(call: ServerInterceptingCallInterface): ServerHttp2Stream | undefined {
  let current: unknown = call;
  while (typeof current === 'object' && current !== null) {
    const stream: unknown = Reflect.get(current, 'stream');
    if (isServerStream(stream)) return stream;
    current = Reflect.get(current, 'nextCall');
  }
  return undefined;
}

function isServerStream(value: unknown): value is ServerHttp2Stream {
  return typeof value === 'object' && value !== null && 'rstCode' in value && 'sentHeaders' in value && 'close' in value && typeof value.close === 'function';
}
