// The Pipeline screen: receivers' accepted and refused spans, each exporter's
// and drain's queue, retries and drops, and spans per second.
import { html } from 'htm/preact';
import { api } from './api.js';
import { useEffect, useState } from 'preact/hooks';
import { SpansChart } from './chart.js';
import { byReason, bytes, count } from './format.js';
import { usePolled } from './poll.js';
import type { DrainView, QueueView, Stats } from './types.js';

const REFRESH_MS = 2_000;

function queue(view: QueueView | null, none = 'no queue') {
  if (view === null) return html`<span class="muted">${none}</span>`;
  return html`${count(view.records)} records, ${bytes(view.bytes)}${view.capacityBytes > 0 ? html` <span class="muted">of ${bytes(view.capacityBytes)}</span>` : null}`;
}

/** A count with its reasons under it: a request refused for a missing key has no spans, so requests are shown beside spans. */
function Refused({ total, reasons }: { total: number; reasons: Record<string, number> }) {
  return html`${count(total)}${total > 0 ? html`<br /><span class="muted small">${byReason(reasons)}</span>` : null}`;
}

export function PipelineScreen({ onUnauthorized }: { onUnauthorized: () => void }) {
  const { data, error } = usePolled<Stats>('/v1/stats', REFRESH_MS, onUnauthorized);
  const [names, setNames] = useState(new Map<string, string>());
  useEffect(function drainNames() {
    api<{ drains: DrainView[] }>('GET', '/v1/drains')
      .then((body) => setNames(new Map(body.drains.map((drain) => [drain.id, drain.name]))))
      .catch(() => undefined);
    // Each poll: a drain renamed or deleted through the API shows as it is now.
  }, [data?.sampledAt]);
  if (data === null) return html`<section><h1>Pipeline</h1>${error === null ? html`<p>Loading…</p>` : html`<p class="error" role="alert">${error}</p>`}</section>`;
  return html`
    <section aria-labelledby="pipeline-title">
      <h1 id="pipeline-title">Pipeline</h1>
      ${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
      <${SpansChart} series=${data.series} windowMs=${data.windowMs} now=${data.sampledAt} />
      <h2>Receivers</h2>
      <div class="table-scroll"><table>
        <thead><tr><th scope="col">Receiver</th><th scope="col">Transport</th><th scope="col" class="num">Accepted spans</th><th scope="col" class="num">Refused spans</th><th scope="col" class="num">Refused requests</th></tr></thead>
        <tbody>
          ${data.receivers.length === 0 ? html`<tr><td colspan="5" class="muted">No spans received yet.</td></tr>` : null}
          ${data.receivers.map(
            (receiver) =>
              html`<tr><th scope="row">${receiver.receiver}</th><td>${receiver.transport}</td><td class="num">${count(receiver.accepted)}</td><td class="num"><${Refused} total=${receiver.refused} reasons=${receiver.refusedByReason} /></td><td class="num"><${Refused} total=${receiver.refusedRequests} reasons=${receiver.refusedRequestsByReason} /></td></tr>`,
          )}
        </tbody>
      </table></div>
      <h2>Exporters</h2>
      <div class="table-scroll"><table>
        <thead><tr><th scope="col">Exporter</th><th scope="col">Queue</th><th scope="col" class="num">Sent</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Retries</th><th scope="col" class="num">Dropped</th><th scope="col">Dropped by reason</th></tr></thead>
        <tbody>
          ${data.exporters.length === 0 ? html`<tr><td colspan="7" class="muted">No exporter besides the drains has counted anything yet.</td></tr>` : null}
          ${data.exporters.map(
            (exporter) => html`<tr><th scope="row">${exporter.exporter}</th><td>${queue(exporter.queue)}</td><td class="num">${count(exporter.sent)}</td><td class="num">${count(exporter.failed)}</td><td class="num">${count(exporter.retries)}</td><td class="num">${count(exporter.dropped)}</td><td>${byReason(exporter.droppedByReason)}</td></tr>`,
          )}
        </tbody>
      </table></div>
      <h2>Drains</h2>
      <div class="table-scroll"><table>
        <thead><tr><th scope="col">Drain</th><th scope="col">Queue</th><th scope="col">Waiting for root</th><th scope="col" class="num">Sent</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Retries</th><th scope="col" class="num">Dropped</th><th scope="col">Dropped by reason</th></tr></thead>
        <tbody>
          ${data.drains.length === 0 ? html`<tr><td colspan="8" class="muted">No drain has run yet.</td></tr>` : null}
          ${data.drains.map(
            (drain) => html`<tr><th scope="row">${names.get(drain.id) ?? drain.id}</th><td>${queue(drain.queue)}</td><td>${queue(drain.pendingQueue, 'none')}</td><td class="num">${count(drain.sent)}</td><td class="num">${count(drain.failed)}</td><td class="num">${count(drain.retries)}</td><td class="num">${count(drain.dropped)}</td><td>${byReason(drain.droppedByReason)}</td></tr>`,
          )}
        </tbody>
      </table></div>
    </section>
  `;
}
