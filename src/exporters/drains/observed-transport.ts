// The drain's transport as the queued sender sees it: it delegates to the
// drain's current HTTP transport (replaced in place when the drain is
// updated) and reports every delivery's outcome to the drain's delivery
// stats, which feed the API counters and the `errored` status.
import type { SendResult, Transport as SenderTransport } from '../exporterhelper/transport.js';
import type { Transport as HttpTransport } from '../otlphttp/transport.js';
import type { DeliveryStats } from './delivery-stats.js';

export function observedTransport(current: () => HttpTransport, stats: DeliveryStats): SenderTransport {
  return {
    send: async function sendObserved(records, spans, signal): Promise<SendResult> {
      let result: SendResult;
      try {
        result = await current().send(records, spans, signal);
      } catch (err) {
        // HTTP outcomes are returned, never thrown: a throw means these bytes cannot be sent at all.
        result = { status: 'failure', error: `could not send: ${err instanceof Error ? err.message : String(err)}` };
      }
      // Spans given up on reach the stats through the sender's onDrop (drain-sender.ts).
      if (result.status === 'success') stats.success(spans - Math.min(spans, result.rejectedSpans ?? 0));
      else stats.failure(result.error);
      return result;
    },
  };
}
