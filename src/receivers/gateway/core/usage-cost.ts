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
  const at = topLevelUsage(text);
  if (at === -1) return text;
  let depth = 0;
  let empty = true;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      empty = false;
      i = stringEnd(text, i);
    } else if (c === '{') {
      depth++;
    } else if (c === '}' && --depth === 0) {
      return `${text.slice(0, i)}${empty ? '' : ','}"cost":${cost}${text.slice(i)}`;
    }
  }
  return text;
}

/**
 * The index of the quote closing the JSON string opened at `open` (the
 * text's length when none does). Found with indexOf, not byte by byte: most
 * of an answer's text is string contents.
 */
function stringEnd(text: string, open: number): number {
  for (let i = text.indexOf('"', open + 1); i !== -1; i = text.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(i - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return text.length;
}

/**
 * Where the value of the top-level object's last `usage` key starts (its
 * `{`), or -1. Only depth 1 counts: an upstream's extension object after
 * usage (Groq's `x_groq.usage`) has a `usage` of its own.
 */
function topLevelUsage(text: string): number {
  let found = -1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      const start = i;
      i = stringEnd(text, i);
      if (depth !== 1 || i - start !== 6 || !text.startsWith('"usage"', start)) continue;
      // In JSON text a string followed by `:` is a key.
      let at = i + 1;
      while (isSpace(text.charCodeAt(at))) at++;
      if (text[at] !== ':') continue;
      at++;
      while (isSpace(text.charCodeAt(at))) at++;
      found = text[at] === '{' ? at : -1;
    }
  }
  return found;
}
