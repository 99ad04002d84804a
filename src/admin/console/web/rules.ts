// Sampling rules as ordered rows: evaluated top to bottom, the first match
// decides (DESIGN section 6). Each row is a group named "Rule N" so keyboard
// and screen-reader users know which row a field or button belongs to.
import { html } from 'htm/preact';
import { FieldError, problemsAt } from './field-error.js';
import { focusSoon } from './focus.js';
import type { RuleBody } from './types.js';

export interface RuleRow {
  id: number;
  env: string;
  percentage: string;
  path: string;
}

/** A percentage as the form reads one: decimal digits with an optional point (Number would also read `0x10`, as 16). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/** Rows as API rules; a percentage that is not a decimal number goes as typed, so the API names it. */
export function ruleBodies(rows: readonly RuleRow[]): Array<Omit<RuleBody, 'rate'> & { rate: number | string }> {
  return rows.map(function ruleBody(row) {
    const text = row.percentage.trim();
    const pct = DECIMAL.test(text) ? Number(text) : Number.NaN;
    const rate: number | string = Number.isFinite(pct) ? Number((pct / 100).toPrecision(15)) : text;
    const path = row.path.trim();
    return { type: 'head_sampling', env: row.env.trim(), rate, ...(path === '' ? {} : { requestPath: path }) };
  });
}

/**
 * The API's problem with a rule's rate, worded for the Percentage field: its
 * "from 0 to 1" would have someone who typed 150 type 1.5, or 0.5 for half.
 */
function percentageProblems(problems: readonly string[], at: string): string[] {
  return problemsAt(problems, `${at}.rate`).length === 0 ? [] : [`${at}.rate: must be a percentage from 0 to 100`];
}

/**
 * The problems the API reported for the rule it was sent as `sampling[sent]`,
 * worded with the place the rule has now: a rule moved or removed since the
 * answer takes its problems along, rather than leaving them on its old place.
 */
function problemsOfRule(problems: readonly string[], sent: number, index: number): string[] {
  if (sent < 0) return [];
  const from = `sampling[${sent}]`;
  return problemsAt(problems, from).map((problem) => `sampling[${index}]${problem.slice(from.length)}`);
}

interface Props {
  rules: RuleRow[];
  setRules: (rules: RuleRow[]) => void;
  problems: string[];
  /** The rows' ids in the order the request that `problems` answers sent them. */
  sentRowIds: readonly number[];
  readOnly: boolean;
  newRow: () => RuleRow;
}

export function RulesEditor({ rules, setRules, problems, sentRowIds, readOnly, newRow }: Props) {
  function update(index: number, change: Partial<RuleRow>) {
    setRules(rules.map((row, i) => (i === index ? { ...row, ...change } : row)));
  }
  function move(index: number, by: number) {
    const target = index + by;
    if (target < 0 || target >= rules.length) return;
    const next = [...rules];
    const [row] = next.splice(index, 1);
    if (row !== undefined) next.splice(target, 0, row);
    setRules(next);
    // Keep the keyboard on the moved row: on the button pressed, or on the other one when the row reached the end its button is disabled at.
    const [pressed, other] = by < 0 ? ['up', 'down'] : ['down', 'up'];
    const atEnd = by < 0 ? target === 0 : target === next.length - 1;
    focusSoon(`rule-${row?.id ?? 0}-${atEnd ? other : pressed}`);
  }
  function remove(index: number) {
    const next = rules.filter((_, i) => i !== index);
    setRules(next);
    // The keyboard goes to the row that took the removed one's place (or the one above it), else to Add rule.
    const neighbour = next[index] ?? next[index - 1];
    focusSoon(neighbour === undefined ? 'add-rule' : `rule-${neighbour.id}-remove`);
  }
  const listProblems = problems.filter((problem) => problemsAt([problem], 'sampling').length > 0 && !/^sampling\[\d+\]/.test(problem));
  return html`
    <fieldset class="rules" aria-describedby="rules-help">
      <legend>Sampling rules</legend>
      <p id="rules-help" class="hint">
        Rules are evaluated top to bottom; the first rule whose environment equals the trace's environment and whose path prefix is blank or begins the request path decides, keeping that percentage of traces (the API's <code>rate</code> is the percentage ÷ 100).
        <strong>${rules.length === 0 ? ' With no rules, this drain forwards 100% of traces.' : ' A request that matches no rule is dropped.'}</strong>
      </p>
      <${FieldError} id="err-sampling" problems=${listProblems} />
      <ol class="rule-list">
        ${rules.map((row, index) => {
          const at = `sampling[${index}]`;
          const own = problemsOfRule(problems, sentRowIds.indexOf(row.id), index);
          const rowOnly = own.filter((problem) => problem.startsWith(`${at}:`));
          return html`
            <li key=${row.id}>
              <fieldset class="rule" aria-label=${`Rule ${index + 1}`}>
                <span class="rule-number" aria-hidden="true">${index + 1}</span>
                <div class="field">
                  <label for=${`rule-${row.id}-env`}>Environment</label>
                  <input id=${`rule-${row.id}-env`} value=${row.env} placeholder="production" onInput=${(e: Event) => update(index, { env: (e.target as HTMLInputElement).value })} aria-invalid=${problemsAt(own, `${at}.env`).length > 0 ? 'true' : undefined} aria-describedby=${`rule-${row.id}-env-err`} />
                  <${FieldError} id=${`rule-${row.id}-env-err`} problems=${problemsAt(own, `${at}.env`)} />
                </div>
                <div class="field narrow">
                  <label for=${`rule-${row.id}-pct`}>Percentage</label>
                  <input id=${`rule-${row.id}-pct`} inputmode="decimal" value=${row.percentage} onInput=${(e: Event) => update(index, { percentage: (e.target as HTMLInputElement).value })} aria-invalid=${problemsAt(own, `${at}.rate`).length > 0 ? 'true' : undefined} aria-describedby=${`rule-${row.id}-pct-err`} />
                  <${FieldError} id=${`rule-${row.id}-pct-err`} problems=${percentageProblems(own, at)} />
                </div>
                <div class="field">
                  <label for=${`rule-${row.id}-path`}>Path prefix</label>
                  <input id=${`rule-${row.id}-path`} value=${row.path} placeholder="/api (blank: any path)" onInput=${(e: Event) => update(index, { path: (e.target as HTMLInputElement).value })} aria-invalid=${problemsAt(own, `${at}.requestPath`).length > 0 ? 'true' : undefined} aria-describedby=${`rule-${row.id}-path-err`} />
                  <${FieldError} id=${`rule-${row.id}-path-err`} problems=${problemsAt(own, `${at}.requestPath`)} />
                </div>
                ${readOnly
                  ? null
                  : html`<div class="rule-buttons">
                      <button type="button" id=${`rule-${row.id}-up`} disabled=${index === 0} onClick=${() => move(index, -1)}>Move up</button>
                      <button type="button" id=${`rule-${row.id}-down`} disabled=${index === rules.length - 1} onClick=${() => move(index, 1)}>Move down</button>
                      <button type="button" id=${`rule-${row.id}-remove`} class="danger" onClick=${() => remove(index)}>Remove rule</button>
                    </div>`}
                <${FieldError} id=${`rule-${row.id}-err`} problems=${rowOnly} />
              </fieldset>
            </li>
          `;
        })}
      </ol>
      ${readOnly ? null : html`<button type="button" id="add-rule" onClick=${() => setRules([...rules, newRow()])}>Add rule</button>`}
    </fieldset>
  `;
}
