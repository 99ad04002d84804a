// The Gateway screen: the catalog from the running config, per provider the
// attempts, failures and latency of the last 15 minutes, and per key the
// tokens and spend the gateway counts, against the key's budget.
import { html } from 'htm/preact';
import { byReason, count, perMillion } from './format.js';
import { usePolled } from './poll.js';
import type { Stats } from './types.js';

const REFRESH_MS = 5_000;

function ms(value: number | null): string {
  return value === null ? '–' : `${value} ms`;
}

function usd(value: number): string {
  if (value >= 1) return `$${value.toFixed(2)}`;
  // Below $0.0001, two significant digits: a cheap model's spend must not read $0.0000.
  const decimals = value > 0 && value < 0.0001 ? Math.min(20, 1 - Math.floor(Math.log10(value))) : 4;
  return `$${value.toFixed(decimals)}`;
}

/** Spend in the budget's current period, as text and a meter. */
function Budget({ budget }: { budget: { usd: number; period: string; spentUsd: number } }) {
  const share = budget.usd === 0 ? 1 : Math.min(1, budget.spentUsd / budget.usd);
  const period = budget.period === 'total' ? 'in total' : `this ${budget.period}`;
  return html`<span class=${share >= 1 ? 'error-text' : ''}>${usd(budget.spentUsd)} of $${budget.usd} ${period}</span>
    <meter min="0" max=${budget.usd} value=${Math.min(budget.spentUsd, budget.usd)} high=${budget.usd * 0.8} optimum="0" aria-label=${`Spend against the budget of ${budget.usd} USD`}></meter>`;
}

/** An endpoint charging other prices than its model's shows them: `at $in / $out` (and its cache prices when they differ). */
function ownPrices(endpoint: Record<string, string>, model: Record<string, string>): string {
  const kinds = ['input', 'output', 'input_cache_read', 'input_cache_write'];
  if (kinds.every((kind) => endpoint[kind] === model[kind])) return '';
  const cache = endpoint['input_cache_read'] === model['input_cache_read'] && endpoint['input_cache_write'] === model['input_cache_write'] ? '' : `, cache ${perMillion(endpoint['input_cache_read'])} / ${perMillion(endpoint['input_cache_write'])}`;
  return ` at ${perMillion(endpoint['input'])} / ${perMillion(endpoint['output'])}${cache}`;
}

export function GatewayScreen({ onUnauthorized }: { onUnauthorized: () => void }) {
  const { data, error } = usePolled<Stats>('/v1/stats', REFRESH_MS, onUnauthorized);
  if (data === null) return html`<section><h1>Gateway</h1>${error === null ? html`<p>Loading…</p>` : html`<p class="error" role="alert">${error}</p>`}</section>`;
  const { catalogs, providers, keys } = data.gateway;
  const minutes = Math.round(data.windowMs / 60_000);
  const spendByKey = new Map(keys.map((key) => [key.key, key]));
  const usage = new Map(data.gateway.usage.map((key) => [key.name, key]));
  // Two gateways may each have a provider of the same name: each row then says whose it is.
  const severalGateways = new Set(providers.map((provider) => provider.receiver)).size > 1;
  return html`
    <section aria-labelledby="gateway-title">
      <h1 id="gateway-title">Gateway</h1>
      ${error === null ? null : html`<p class="error" role="alert">${error}</p>`}
      ${catalogs.length === 0 ? html`<p>No gateway receiver is configured (<code>receivers.gateway</code>).</p>` : null}
      ${catalogs.map(
        (catalog) => html`
          <h2>Catalog <span class="muted">(${catalog.receiver} on ${catalog.endpoint})</span></h2>
          <div class="table-scroll"><table>
            <caption class="hint">Prices in USD per million tokens. Providers are tried in the order shown.</caption>
            <thead><tr><th scope="col">Model</th><th scope="col">Name</th><th scope="col">Providers in order</th><th scope="col" class="num">Input</th><th scope="col" class="num">Output</th><th scope="col" class="num">Cache read</th><th scope="col" class="num">Cache write</th></tr></thead>
            <tbody>
              ${catalog.models.map(
                (model) => html`<tr>
                  <th scope="row">${model.id}</th>
                  <td>${model.name ?? ''}</td>
                  <td>${model.endpoints.map((endpoint) => `${endpoint.provider} (${endpoint.model})${ownPrices(endpoint.pricing, model.pricing)}`).join(' → ')}</td>
                  <td class="num">${perMillion(model.pricing['input'])}</td>
                  <td class="num">${perMillion(model.pricing['output'])}</td>
                  <td class="num">${perMillion(model.pricing['input_cache_read'])}</td>
                  <td class="num">${perMillion(model.pricing['input_cache_write'])}</td>
                </tr>`,
              )}
            </tbody>
          </table></div>
          <h2>Keys</h2>
          <div class="table-scroll"><table>
            <caption class="hint">Today is the UTC day ${usage.get(catalog.keys[0]?.name ?? '')?.day ?? ''}, from the usage records; since start counts this process's metrics.</caption>
            <thead><tr><th scope="col">Key</th><th scope="col" class="num">Requests today</th><th scope="col" class="num">Tokens today</th><th scope="col" class="num">Spend today</th><th scope="col">Spend against budget</th><th scope="col">Limits</th><th scope="col" class="num">Tokens since start</th></tr></thead>
            <tbody>
              ${catalog.keys.map((key) => {
                const used = usage.get(key.name);
                const metered = spendByKey.get(key.name);
                const limits = [key.requestsPerMinute === null ? '' : `${count(key.requestsPerMinute)} req/min`, key.tokensPerMinute === null ? '' : `${count(key.tokensPerMinute)} tokens/min`].filter((text) => text !== '').join(', ');
                return html`<tr>
                  <th scope="row">${key.name}</th>
                  <td class="num">${count(used?.today.requests ?? 0)}</td>
                  <td class="num">${count(used?.today.tokens ?? 0)}</td>
                  <td class="num">${usd(used?.today.costUsd ?? 0)}</td>
                  <td>${used?.budget === null || used?.budget === undefined ? html`<span class="muted">no budget</span>` : html`<${Budget} budget=${used.budget} />`}</td>
                  <td>${limits === '' ? html`<span class="muted">none</span>` : limits}</td>
                  <td class="num">${count(metered?.tokens ?? 0)}</td>
                </tr>`;
              })}
            </tbody>
          </table></div>
        `,
      )}
      <h2>Providers <span class="muted">(last ${minutes} minutes)</span></h2>
      ${providers.length === 0
        ? html`<p>No upstream attempts in the last ${minutes} minutes.</p>`
        : html`<div class="table-scroll"><table>
            <thead><tr><th scope="col">Provider</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Failures</th><th scope="col">Failures by type</th><th scope="col" class="num">p50</th><th scope="col" class="num">p99</th></tr></thead>
            <tbody>
              ${providers.map(
                (provider) => html`<tr>
                  <th scope="row">${provider.provider}${severalGateways ? html` <span class="muted">(${provider.receiver})</span>` : null}</th>
                  <td class="num">${count(provider.attempts)}</td>
                  <td class="num">${count(provider.failures)}</td>
                  <td>${byReason(provider.failuresByType)}</td>
                  <td class="num">${ms(provider.latencyMs.p50)}</td>
                  <td class="num">${ms(provider.latencyMs.p99)}</td>
                </tr>`,
              )}
            </tbody>
          </table></div>`}
    </section>
  `;
}
