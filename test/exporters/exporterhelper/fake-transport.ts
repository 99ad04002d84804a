// An in-process transport that answers from a script and records what it got.
import type { SendResult, Transport } from '../../../src/exporters/exporterhelper/index.js';

export interface FakeTransport extends Transport {
  /** Every call, in order, with the first byte of each record (tests tag records by it). */
  readonly calls: { readonly tags: number[]; readonly spans: number; readonly result: SendResult }[];
  /** Tags of records in calls that succeeded. */
  delivered(): number[];
}

/** `script` answers call i; past its end every call gets `then`. */
export function createFakeTransport(script: readonly SendResult[], then: SendResult = { status: 'success' }): FakeTransport {
  const calls: { tags: number[]; spans: number; result: SendResult }[] = [];
  return {
    calls,
    send(records, spans) {
      const result = script[calls.length] ?? then;
      calls.push({ tags: records.map((r) => r[0] ?? -1), spans, result });
      return Promise.resolve(result);
    },
    delivered() {
      return calls.filter((c) => c.result.status === 'success').flatMap((c) => c.tags);
    },
  };
}

/** A transport whose sends never finish until their signal aborts. */
export function createHangingTransport(): Transport & { readonly started: () => number } {
  let started = 0;
  return {
    started: () => started,
    send(_records, _spans, signal) {
      started += 1;
      return new Promise<SendResult>((resolve) => {
        signal.addEventListener('abort', function aborted() {
          resolve({ status: 'retryable', error: 'aborted' });
        }, { once: true });
      });
    },
  };
}
