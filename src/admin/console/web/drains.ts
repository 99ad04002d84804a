// The Drains screen: every drain with its delivery counters and last error,
// enable/disable/delete, and the form to create or edit one.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { DrainForm } from './drain-form.js';
import { focusHeading, focusSoon } from './focus.js';
import { count, sum, time } from './format.js';
import { usePolled } from './poll.js';
import type { DrainView } from './types.js';

const REFRESH_MS = 3_000;

function LastError({ drain }: { drain: DrainView }) {
  const message = drain.error ?? drain.deliveries.lastError;
  if (message === null || message === undefined) return html`<span class="muted">none</span>`;
  return html`<span class="error-text">${message}</span>${drain.deliveries.lastFailureAt === null ? null : html`<br /><time class="muted">${time(drain.deliveries.lastFailureAt)}</time>`}`;
}

/** Drops that need attention first; traces the rules sampled out are expected and shown apart. */
function Dropped({ dropped }: { dropped: Record<string, number> }) {
  const { sampled_out: sampledOut = 0, ...rest } = dropped;
  return html`${count(sum(rest))}${sampledOut > 0 ? html`<br /><span class="muted small">+${count(sampledOut)} sampled out</span>` : null}`;
}

export function DrainsScreen({ onUnauthorized }: { onUnauthorized: () => void }) {
  const { data, error, reload } = usePolled<{ drains: DrainView[] }>('/v1/drains', REFRESH_MS, onUnauthorized);
  const [editing, setEditing] = useState<DrainView | 'new' | null>(null);
  // The form replaces the table: it takes the keyboard on opening and gives it back to the button that opened it.
  function openForm(drain: DrainView | 'new') {
    setEditing(drain);
    requestAnimationFrame(focusHeading);
  }
  const [actionError, setActionError] = useState<string | null>(null);

  /** Runs an action and reloads the list; false when it failed (the error is shown). */
  async function act(run: () => Promise<unknown>): Promise<boolean> {
    setActionError(null);
    try {
      await run();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        onUnauthorized();
        return false;
      }
      setActionError(err instanceof Error ? err.message : String(err));
      reload();
      return false;
    }
    reload();
    return true;
  }
  const setStatus = (drain: DrainView, status: 'enabled' | 'disabled') => act(() => api('PATCH', `/v1/drains/${encodeURIComponent(drain.id)}`, { status }));
  function remove(drain: DrainView) {
    if (!window.confirm(`Delete drain ${drain.name}? Its queued spans are discarded.`)) return;
    // The keyboard goes to the next drain's Edit (or the one above it), else to New drain, not to <body> with the row.
    const rows = data?.drains ?? [];
    const at = rows.findIndex((row) => row.id === drain.id);
    const neighbour = rows[at + 1] ?? rows[at - 1];
    void act(() => api('DELETE', `/v1/drains/${encodeURIComponent(drain.id)}`)).then((done) => done && focusSoon(neighbour === undefined ? 'new-drain' : `edit-${neighbour.id}`));
  }

  if (editing !== null) {
    return html`<${DrainForm}
      drain=${editing === 'new' ? null : editing}
      onDone=${() => {
        setEditing(null);
        reload();
        focusSoon(editing === 'new' ? 'new-drain' : `edit-${editing.id}`);
      }}
      onUnauthorized=${onUnauthorized}
    />`;
  }
  const drains = data?.drains ?? [];
  return html`
    <section aria-labelledby="drains-title">
      <div class="title-row">
        <h1 id="drains-title">Drains</h1>
        <button type="button" id="new-drain" onClick=${() => openForm('new')}>New drain</button>
      </div>
      ${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
      ${actionError === null ? null : html`<p class="error" role="alert">${actionError}</p>`}
      ${data === null
        ? error === null
          ? html`<p>Loading…</p>`
          : null
        : drains.length === 0
          ? html`<p>No drains yet. A drain delivers the traces its sampling rules select to an HTTPS endpoint.</p>`
          : html`
              <div class="table-scroll"><table>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">Source</th><th scope="col">Status</th><th scope="col">Format</th><th scope="col">Endpoint</th><th scope="col" class="num">Spans sent</th><th scope="col" class="num">Spans dropped</th><th scope="col">Last error</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  ${drains.map(
                    (drain) => html`
                      <tr key=${drain.id} data-drain=${drain.name}>
                        <th scope="row">${drain.name}</th>
                        <td>${drain.source}</td>
                        <td><span class=${`badge ${drain.status}`}>${drain.status}</span></td>
                        <td>${drain.delivery.encoding === 'proto' ? 'protobuf' : 'json'}${drain.delivery.compression === 'gzip' ? ' (gzip)' : ''}</td>
                        <td class="url">${drain.delivery.endpoint.traces}</td>
                        <td class="num">${count(drain.deliveries.spansSent)}</td>
                        <td class="num"><${Dropped} dropped=${drain.deliveries.spansDropped} /></td>
                        <td><${LastError} drain=${drain} /></td>
                        <td class="actions">
                          <button type="button" id=${`edit-${drain.id}`} onClick=${() => openForm(drain)}>Edit</button>
                          ${drain.source === 'config'
                            ? html`<span class="muted">config file</span>`
                            : html`
                                ${drain.status === 'disabled'
                                  ? html`<button type="button" onClick=${() => void setStatus(drain, 'enabled')}>Enable</button>`
                                  : html`<button type="button" onClick=${() => void setStatus(drain, 'disabled')}>Disable</button>`}
                                <button type="button" class="danger" onClick=${() => remove(drain)}>Delete</button>
                              `}
                        </td>
                      </tr>
                    `,
                  )}
                </tbody>
              </table></div>
            `}
    </section>
  `;
}
