// When may an OpenAI-compatible upstream get the client's own JSON text with
// only `model` replaced, instead of the parsed request serialized again?
// When that text says exactly what the parsed request says: the fast parser
// took it (no transforms, nothing the gateway consumes or maps), no
// top-level null was dropped, and `model` is the text's first key and its
// only `"model"` anywhere, so no duplicate key could carry another model to
// the upstream. Anything else takes the usual path.
import type { RawRequestText } from './openai-types.js';

const MODEL_KEY = '"model"';

function skipSpace(text: string, at: number): number {
  let i = at;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  return i;
}

/** The raw text and where its `model` value ends, or undefined when the text cannot stand for the request. */
export function rawRequestText(text: string, model: string): RawRequestText | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined; // {
  i = skipSpace(text, i + 1);
  if (!text.startsWith(MODEL_KEY, i)) return undefined;
  if (text.indexOf(MODEL_KEY, i + MODEL_KEY.length) !== -1) return undefined;
  i = skipSpace(text, i + MODEL_KEY.length);
  if (text.charCodeAt(i) !== 0x3a) return undefined; // :
  i = skipSpace(text, i + 1);
  // The value as JSON.stringify writes it; a client that escaped it otherwise takes the usual path.
  const value = JSON.stringify(model);
  if (!text.startsWith(value, i)) return undefined;
  return { text, afterModel: i + value.length };
}

/** The text with its `model` value replaced by `model`. */
export function withModel(raw: RawRequestText, model: string): string {
  return `{"model":${JSON.stringify(model)}${raw.text.slice(raw.afterModel)}`;
}
