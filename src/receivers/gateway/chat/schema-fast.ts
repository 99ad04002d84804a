// A fast path in front of the zod schema (schema.ts) for the most common
// request shape: plain text messages and scalar sampling parameters. It either
// returns exactly what chatRequestSchema would (same keys, same order: shape
// keys first, then unknown top-level keys) or undefined, and then zod decides,
// errors and all. Anything unusual (tools, response_format, routing options,
// parts, unknown message keys) goes to zod.

type Check = (value: unknown) => boolean;

const ROLES: ReadonlySet<unknown> = new Set(['system', 'developer', 'user', 'assistant']);
const MESSAGE_KEYS: ReadonlySet<string> = new Set(['role', 'content', 'name']);

function range(min: number, max: number): Check {
  return function inRange(v) {
    return v === null || v === undefined || (typeof v === 'number' && v >= min && v <= max);
  };
}

function integer(min: number, max: number): Check {
  return function isInteger(v) {
    return v === null || v === undefined || (typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max);
  };
}

/** Top-level keys the fast path checks itself, in chatRequestSchema's shape order. */
const FAST_KEYS: ReadonlyMap<string, Check> = new Map<string, Check>([
  ['model', (v) => typeof v === 'string' && v.length > 0],
  ['messages', isTextMessages],
  ['stream', (v) => v === null || v === undefined || typeof v === 'boolean'],
  ['temperature', range(0, 2)],
  ['top_p', range(0, 1)],
  ['max_tokens', integer(1, Number.MAX_SAFE_INTEGER)],
  ['max_completion_tokens', integer(1, Number.MAX_SAFE_INTEGER)],
  ['seed', integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)],
  ['n', integer(1, 128)],
  ['presence_penalty', range(-2, 2)],
  ['frequency_penalty', range(-2, 2)],
  ['user', (v) => v === undefined || typeof v === 'string'],
]);

/** The schema's other keys: any of them sends the request to zod. */
const ZOD_KEYS: ReadonlySet<string> = new Set([
  'stream_options', 'tools', 'tool_choice', 'parallel_tool_calls', 'stop', 'logit_bias', 'logprobs', 'top_logprobs',
  'response_format', 'reasoning_effort', 'reasoning', 'providerOptions', 'gateway', 'order', 'only', 'models', '__proto__',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTextMessage(m: unknown): boolean {
  if (!isRecord(m) || !ROLES.has(m['role']) || typeof m['content'] !== 'string') return false;
  for (const key of Object.keys(m)) if (!MESSAGE_KEYS.has(key)) return false;
  return !('name' in m) || m['name'] === undefined || typeof m['name'] === 'string';
}

function isTextMessages(v: unknown): boolean {
  if (!Array.isArray(v) || v.length === 0) return false;
  for (const m of v) if (!isTextMessage(m)) return false;
  return true;
}

function copyMessage(m: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m['role'], content: m['content'] };
  if (Object.hasOwn(m, 'name')) out['name'] = m['name'];
  return out;
}

/** chatRequestSchema's output for a common request, or undefined to ask zod. */
export function fastParse(json: unknown): Record<string, unknown> | undefined {
  if (!isRecord(json) || !Object.hasOwn(json, 'model') || !Object.hasOwn(json, 'messages')) return undefined;
  const keys = Object.keys(json);
  for (const key of keys) {
    if (ZOD_KEYS.has(key)) return undefined;
    const check = FAST_KEYS.get(key);
    if (check !== undefined && !check(json[key])) return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const key of FAST_KEYS.keys()) {
    if (!Object.hasOwn(json, key)) continue;
    out[key] = key === 'messages' ? (json[key] as Record<string, unknown>[]).map(copyMessage) : json[key];
  }
  for (const key of keys) if (!FAST_KEYS.has(key)) out[key] = json[key];
  return out;
}
