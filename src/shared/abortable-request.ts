// undici's request() leaves its signal unheard while the request's
// connection is still being made: a TCP connect or TLS handshake that hangs
// runs on to undici's connect timeout (10 s), whatever timeout or shutdown
// the signal stands for. This settles at the abort; an answer that comes
// after it has its body thrown away.
import { request, type Dispatcher } from 'undici';

type RequestOptions = Parameters<typeof request>[1] & { readonly signal: AbortSignal };

export function abortableRequest(url: string | URL, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { signal } = options;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  const pending = request(url, options);
  return new Promise(function race(resolve, reject) {
    function aborted(): void {
      reject(signal.reason as Error);
      pending.then(
        (late) => late.body.destroy(),
        function ignore() {},
      );
    }
    signal.addEventListener('abort', aborted, { once: true });
    pending.then(
      (response) => {
        signal.removeEventListener('abort', aborted);
        // Without an opaque given, undici's opaque is null.
        resolve(response as Dispatcher.ResponseData);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', aborted);
        reject(err as Error);
      },
    );
  });
}
