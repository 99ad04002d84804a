// V8's full garbage collection, without starting node with --expose-gc.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * Collects this thread's garbage now (synchronously). Twice: what the first
 * collection finds dead is not all given back by it (after a burst of large
 * OTLP bodies one collection left RSS about 20 MiB higher than two).
 */
export function collectGarbage(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  gc();
}
