// API problems (`path: message`) by field.
import { html } from 'htm/preact';
import { splitProblem } from './api.js';

/** Problems whose JSON path is `prefix` or lies under it (`sampling[0]` holds `sampling[0].rate`). */
export function problemsAt(problems: readonly string[], prefix: string): string[] {
  return problems.filter(function under(problem) {
    const { path } = splitProblem(problem);
    return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
  });
}

export function FieldError({ id, problems }: { id: string; problems: string[] }) {
  return html`<p id=${id} class="field-error" aria-live="polite">${problems.map((problem) => html`<span>${problem}</span>`)}</p>`;
}
