// Where a request's cost shows on the gateway's own outputs: the CLIENT
// span's sluice.usage.cost and `usage.cost` inside an OpenAI-shaped answer.
import { costToNumber, type Cost } from '../../../shared/money.js';
import type { SpanRecord } from './spans.js';

/** sluice.usage.cost beside the gen_ai.usage.* attributes (span-usage.ts); undefined when nothing priced the attempt. */
export function recordCost(span: SpanRecord, cost: Cost | undefined): void {
  if (cost !== undefined) span.double('sluice.usage.cost', costToNumber(cost));
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Adds `"cost": <usd>` as the last member of the top-level `usage` object of
 * a passthrough answer's JSON text, without parsing and re-serializing the
 * rest. Last, so it wins over a `cost` the upstream sent. The text is
 * returned unchanged when it has no usage object.
 */
export function insertUsageCost(text: string, cost: number): string {
  // In JSON text a quote inside a string is escaped, so `"usage"` followed by `:` is a key;
  // the top-level usage comes after choices, so the last one is it.
  let at = text.lastIndexOf('"usage"');
  if (at === -1) return text;
  at += 7;
  while (isSpace(text.charCodeAt(at))) at++;
  if (text[at] !== ':') return text;
  at++;
  while (isSpace(text.charCodeAt(at))) at++;
  if (text[at] !== '{') return text;
  let depth = 0;
  let inString = false;
  let empty = true;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      empty = false;
    } else if (c === '{') {
      depth++;
    } else if (c === '}') {
      depth--;
      if (depth === 0) return `${text.slice(0, i)}${empty ? '' : ','}"cost":${cost}${text.slice(i)}`;
    }
  }
  return text;
}
