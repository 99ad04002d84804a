// Create or edit one drain. Secret, header values and the TLS CA are
// write-only: the API never returns them, so the form says whether they are
// set and sends them only when the user types new ones. Each API problem is
// shown next to the field its JSON path names.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { FieldError, problemsAt } from './field-error.js';
import { focusSoon } from './focus.js';
import { percentage } from './format.js';
import { type RuleRow, RulesEditor, ruleBodies } from './rules.js';
import type { DrainView, TestResult } from './types.js';

interface Props {
  drain: DrainView | null;
  onDone: () => void;
  onUnauthorized: () => void;
}

let nextRowId = 1;

export function newRow(env = '', pct = '100', path = ''): RuleRow {
  return { id: nextRowId++, env, percentage: pct, path };
}

function parseHeaders(text: string): { headers: Record<string, string> } | { problem: string } {
  const headers: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { problem: `delivery.headers: line ${i + 1} must read name: value` };
    const name = line.slice(0, colon).trim();
    // A name typed twice would keep only the last line's value (the API's object has one of each).
    const first = Object.keys(headers).find((seen) => seen.toLowerCase() === name.toLowerCase());
    if (first !== undefined) return { problem: `delivery.headers: line ${i + 1} repeats header ${first} (header names are case-insensitive)` };
    headers[name] = line.slice(colon + 1).trim();
  }
  return { headers };
}

function TestOutcome({ result }: { result: TestResult }) {
  const status = result.status === null ? 'no HTTP status' : `HTTP ${result.status}`;
  return html`<span class=${result.ok ? 'ok-text' : 'error-text'}>${result.ok ? 'Delivered' : 'Failed'}: ${status} in ${result.latencyMs} ms${result.error === undefined ? '' : ` (${result.error})`}</span>`;
}

export function DrainForm({ drain, onDone, onUnauthorized }: Props) {
  const readOnly = drain?.source === 'config';
  const editing = drain !== null;
  const [name, setName] = useState(drain?.name ?? '');
  const [url, setUrl] = useState(drain?.delivery.endpoint.traces ?? '');
  const [encoding, setEncoding] = useState<'proto' | 'json'>(drain?.delivery.encoding ?? 'proto');
  const [compression, setCompression] = useState<'gzip' | 'none'>(drain?.delivery.compression ?? 'gzip');
  const [insecure, setInsecure] = useState(drain?.delivery.insecure ?? false);
  const [headersText, setHeadersText] = useState('');
  const [clearHeaders, setClearHeaders] = useState(false);
  const [secret, setSecret] = useState('');
  const [clearSecret, setClearSecret] = useState(false);
  const [ca, setCa] = useState('');
  const [clearCa, setClearCa] = useState(false);
  const [initialRules] = useState<RuleRow[]>(() => (drain?.sampling ?? []).map((rule) => newRow(rule.env, percentage(rule.rate), rule.requestPath ?? '')));
  const [rules, setRules] = useState<RuleRow[]>(initialRules);
  const [problems, setProblems] = useState<string[]>([]);
  // The rules' order when the form was last saved: the API names a rule's problems by its place then.
  const [sentRowIds, setSentRowIds] = useState<number[]>([]);
  const [busy, setBusy] = useState(false);
  const [testResult, setTestResult] = useState<{ body: string; result: TestResult } | null>(null);
  const [testing, setTesting] = useState(false);

  /** A Remove button goes away once pressed: the keyboard goes to the field it cleared, not to <body>. */
  function removeWriteOnly(clear: (value: boolean) => void, field: string) {
    clear(true);
    focusSoon(field);
  }

  const secretSet = drain?.delivery.secret === true && !clearSecret;
  const caSet = drain?.delivery.tls.ca === true && !clearCa;
  const headerNames = clearHeaders ? [] : (drain?.delivery.headers ?? []);

  /** The delivery object: on edit, write-only fields only when typed anew (or null to remove). */
  function delivery(complete: boolean): Record<string, unknown> | { problem: string } {
    const body: Record<string, unknown> = { type: 'otlphttp', endpoint: { traces: url.trim() }, encoding, compression, insecure };
    const parsed = parseHeaders(headersText);
    if ('problem' in parsed) return parsed;
    if (headersText.trim() !== '' || complete) body['headers'] = parsed.headers;
    else if (clearHeaders) body['headers'] = {};
    if (secret !== '') body['secret'] = secret;
    else if (clearSecret) body['secret'] = null;
    if (ca.trim() !== '') body['tls'] = { ca: ca.trim() };
    else if (clearCa) body['tls'] = null;
    return body;
  }

  /**
   * An edit sends only what the form changed, so a change made elsewhere
   * meanwhile (another operator, the API) to the fields left alone stays.
   */
  function changesTo(stored: DrainView, built: Record<string, unknown>): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    if (name.trim() !== stored.name) body['name'] = name.trim();
    const before: Record<string, unknown> = { endpoint: stored.delivery.endpoint, encoding: stored.delivery.encoding, compression: stored.delivery.compression, insecure: stored.delivery.insecure };
    const changed = Object.entries(built).filter(([key, value]) => key !== 'type' && JSON.stringify(value) !== JSON.stringify(before[key]));
    if (changed.length > 0) body['delivery'] = Object.fromEntries(changed);
    const sampling = ruleBodies(rules);
    if (JSON.stringify(sampling) !== JSON.stringify(ruleBodies(initialRules))) body['sampling'] = sampling;
    return body;
  }

  async function save(event: Event) {
    event.preventDefault();
    if (readOnly) return;
    const built = delivery(drain === null);
    if ('problem' in built) return setProblems([built.problem as string]);
    setBusy(true);
    setProblems([]);
    setSentRowIds(rules.map((row) => row.id));
    try {
      if (drain === null) await api('POST', '/v1/drains', { name: name.trim(), delivery: built, sampling: ruleBodies(rules), status: 'enabled' });
      else await api('PATCH', `/v1/drains/${encodeURIComponent(drain.id)}`, changesTo(drain, built));
      onDone();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return onUnauthorized();
      setProblems(err instanceof ApiError ? err.problems : [err instanceof Error ? err.message : String(err)]);
    } finally {
      setBusy(false);
    }
  }

  /** What Test delivery posts for the form as it is now. */
  function testBody(): Record<string, unknown> | { problem: string } {
    // An existing drain is tested as stored, with the form's changes over it:
    // its secret, header values and CA are never sent to the page, so the API merges them in.
    const built = readOnly ? {} : delivery(drain === null);
    if ('problem' in built) return built;
    return drain === null ? { delivery: built } : { drain: drain.id, delivery: built };
  }

  async function test() {
    const body = testBody();
    if ('problem' in body) return setProblems([body.problem as string]);
    setTesting(true);
    setTestResult(null);
    setProblems([]);
    try {
      setTestResult({ body: JSON.stringify(body), result: await api<TestResult>('POST', '/v1/drains/test', body) });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return onUnauthorized();
      setProblems(err instanceof ApiError ? err.problems : [err instanceof Error ? err.message : String(err)]);
    } finally {
      setTesting(false);
    }
  }

  // A result stands for the delivery it tested: once a field it used changes, it no longer says how this one fares.
  const shownResult = testResult !== null && testResult.body === JSON.stringify(testBody()) ? testResult.result : null;

  const claimed = ['name', 'delivery.endpoint', 'delivery.encoding', 'delivery.compression', 'delivery.insecure', 'delivery.headers', 'delivery.secret', 'delivery.tls', 'sampling'];
  const unplaced = problems.filter((problem) => !claimed.some((prefix) => problemsAt([problem], prefix).length > 0));
  const input = (setter: (value: string) => void) => (e: Event) => setter((e.target as HTMLInputElement).value);
  const invalid = (prefix: string) => (problemsAt(problems, prefix).length > 0 ? 'true' : undefined);

  return html`
    <section aria-labelledby="form-title">
      <h1 id="form-title">${readOnly ? `Drain ${drain?.name ?? ''}` : editing ? `Edit drain ${drain?.name ?? ''}` : 'New drain'}</h1>
      ${readOnly
        ? html`<p class="notice" role="note">This drain is defined in the config file (<code>drains:</code> in the YAML), so it is read-only here and the API answers 409 to changes. Edit the file and reload the daemon (SIGHUP) to change it.</p>`
        : null}
      ${unplaced.length === 0 ? null : html`<div class="error" role="alert">${unplaced.map((problem) => html`<p>${problem}</p>`)}</div>`}
      <form onSubmit=${save} novalidate>
        <fieldset disabled=${readOnly} class="plain">
          <div class="field">
            <label for="drain-name">Name</label>
            <input id="drain-name" value=${name} onInput=${input(setName)} aria-invalid=${invalid('name')} aria-describedby="err-name" />
            <${FieldError} id="err-name" problems=${problemsAt(problems, 'name')} />
          </div>
          <div class="field">
            <label for="drain-url">Endpoint URL</label>
            <input id="drain-url" type="url" value=${url} placeholder="https://collector.example.com/v1/traces" onInput=${input(setUrl)} aria-invalid=${invalid('delivery.endpoint')} aria-describedby="err-url" />
            <${FieldError} id="err-url" problems=${problemsAt(problems, 'delivery.endpoint')} />
          </div>
          <div class="field-row">
            <div class="field">
              <label for="drain-format">Format</label>
              <select id="drain-format" value=${encoding} onChange=${(e: Event) => setEncoding((e.target as HTMLSelectElement).value as 'proto' | 'json')} aria-describedby="err-format">
                <option value="proto">protobuf</option>
                <option value="json">json</option>
              </select>
              <${FieldError} id="err-format" problems=${problemsAt(problems, 'delivery.encoding')} />
            </div>
            <div class="field">
              <label for="drain-compression">Compression</label>
              <select id="drain-compression" value=${compression} onChange=${(e: Event) => setCompression((e.target as HTMLSelectElement).value as 'gzip' | 'none')} aria-describedby="err-compression">
                <option value="gzip">gzip</option>
                <option value="none">none</option>
              </select>
              <${FieldError} id="err-compression" problems=${problemsAt(problems, 'delivery.compression')} />
            </div>
          </div>
          <div class="field checkbox">
            <input id="drain-insecure" type="checkbox" checked=${insecure} onChange=${(e: Event) => setInsecure((e.target as HTMLInputElement).checked)} />
            <label for="drain-insecure">Allow plain http:// (insecure, for local testing only)</label>
            <${FieldError} id="err-insecure" problems=${problemsAt(problems, 'delivery.insecure')} />
          </div>
          <div class="field">
            <label for="drain-headers">Headers</label>
            <textarea id="drain-headers" rows="2" value=${headersText} placeholder="x-api-key: …" onInput=${input(setHeadersText)} aria-invalid=${invalid('delivery.headers')} aria-describedby="help-headers err-headers"></textarea>
            <p id="help-headers" class="hint">
              One <code>name: value</code> a line. Values are write-only.
              ${editing && headerNames.length > 0 ? html` Set now: ${headerNames.join(', ')} (values hidden). Leave blank to keep them; headers typed here replace them all.` : null}
              ${editing && headerNames.length > 0 && !readOnly ? html` <button type="button" class="link" onClick=${() => removeWriteOnly(setClearHeaders, 'drain-headers')}>Remove headers</button>` : null}
            </p>
            <${FieldError} id="err-headers" problems=${problemsAt(problems, 'delivery.headers')} />
          </div>
          <div class="field">
            <label for="drain-secret">Secret</label>
            <input id="drain-secret" type="password" autocomplete="new-password" value=${secret} placeholder=${secretSet ? 'set (leave blank to keep)' : 'not set'} onInput=${input(setSecret)} aria-invalid=${invalid('delivery.secret')} aria-describedby="help-secret err-secret" />
            <p id="help-secret" class="hint">
              <span data-testid="secret-state">${secretSet ? 'A secret is set.' : 'No secret is set.'}</span> Signs each delivery (<code>x-sluice-signature</code>, HMAC-SHA256 of the body). Write-only: it is never shown again.
              ${secretSet && !readOnly ? html` <button type="button" class="link" onClick=${() => removeWriteOnly(setClearSecret, 'drain-secret')}>Remove secret</button>` : null}
            </p>
            <${FieldError} id="err-secret" problems=${problemsAt(problems, 'delivery.secret')} />
          </div>
          <div class="field">
            <label for="drain-ca">TLS CA</label>
            <textarea id="drain-ca" rows="3" value=${ca} placeholder="-----BEGIN CERTIFICATE-----" onInput=${input(setCa)} aria-invalid=${invalid('delivery.tls')} aria-describedby="help-ca err-ca"></textarea>
            <p id="help-ca" class="hint">
              PEM of a CA to trust for this endpoint besides the system's. ${caSet ? 'A CA is set; leave blank to keep it.' : ''}
              ${caSet && !readOnly ? html` <button type="button" class="link" onClick=${() => removeWriteOnly(setClearCa, 'drain-ca')}>Remove TLS CA</button>` : null}
            </p>
            <${FieldError} id="err-ca" problems=${problemsAt(problems, 'delivery.tls')} />
          </div>
          <${RulesEditor} rules=${rules} setRules=${setRules} problems=${problems} sentRowIds=${sentRowIds} readOnly=${readOnly} newRow=${() => newRow()} />
        </fieldset>
        <div class="buttons">
          ${readOnly ? null : html`<button type="submit" disabled=${busy}>Save</button>`}
          <button type="button" onClick=${() => void test()} disabled=${testing}>Test delivery</button>
          <button type="button" class="secondary" onClick=${onDone}>${readOnly ? 'Back' : 'Cancel'}</button>
        </div>
        <p class="test-result" role="status" aria-live="polite">${testing ? 'Testing…' : shownResult === null ? '' : html`<${TestOutcome} result=${shownResult} />`}</p>
      </form>
    </section>
  `;
}

