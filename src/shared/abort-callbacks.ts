// Abort callbacks for short-lived work (one delivery, one wait) on a
// long-lived signal (a component's shutdown signal). Adding and removing an
// event listener on the signal each time would add and drop the entry in
// the signal's own listener map, the churn LinkedSet describes: every
// callback, and all it holds, would outlive its work until a full GC. Here
// a signal gets one listener for good, and the callbacks sit in a LinkedSet.
import { LinkedSet } from './linked-set.js';

const callbacksBySignal = new WeakMap<AbortSignal, LinkedSet<() => void>>();

function noop(): void {}

/** Runs `callback` once when `signal` aborts (at once if it has); returns what removes it. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return noop;
  }
  let callbacks = callbacksBySignal.get(signal);
  if (callbacks === undefined) {
    const created = new LinkedSet<() => void>();
    callbacks = created;
    callbacksBySignal.set(signal, created);
    signal.addEventListener(
      'abort',
      function runCallbacks() {
        // One at a time, so a callback removed by an earlier one does not run;
        // a throw is reported as an event listener's would be, and the rest still run.
        for (let run = created.shift(); run !== undefined; run = created.shift()) {
          try {
            run();
          } catch (err) {
            process.nextTick(() => {
              throw err;
            });
          }
        }
      },
      { once: true },
    );
  }
  const set = callbacks;
  const link = set.add(callback);
  return function remove() {
    set.delete(link);
  };
}

/**
 * A signal for one piece of work that aborts when `signal` does or once `ms`
 * have passed, whichever comes first. One controller and one unref'd timer,
 * not AbortSignal.any/timeout, whose weak references and timer keep the work
 * reachable past its end. end() when the work is done.
 */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #stopListening: () => void;
  #timedOut = false;

  constructor(signal: AbortSignal, ms: number) {
    const controller = this.#controller;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      controller.abort(new Error(`timed out after ${ms}ms`));
    }, ms).unref();
    this.#stopListening = onAbort(signal, function cancelled() {
      controller.abort(signal.reason);
    });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the time ran out (rather than `signal` aborting). */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  end(): void {
    clearTimeout(this.#timer);
    this.#stopListening();
  }
}
