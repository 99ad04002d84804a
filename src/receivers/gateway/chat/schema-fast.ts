// A fast path in front of the zod schema (schema.ts) for the most common
// request shape: plain text messages and scalar sampling parameters. It either
// returns exactly what chatRequestSchema would (same keys, same order: shape
// keys first, then unknown top-level keys) or undefined, and then zod decides,
// errors and all. Anything unusual (tools, response_format, routing options,
// parts, unknown message keys) goes to zod. Function tools with a string
// tool_choice take the fast path too: deployed apps send them on every request.
import { FUNCTION_NAME } from './schema.js';

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
  ['tools', isFunctionTools],
  ['tool_choice', (v) => TOOL_CHOICES.has(v)],
  ['parallel_tool_calls', (v) => typeof v === 'boolean'],
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
  'stream_options', 'stop', 'logit_bias', 'logprobs', 'top_logprobs',
  'response_format', 'reasoning_effort', 'reasoning', 'providerOptions', 'gateway', 'order', 'only', 'models', '__proto__',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const TOOL_CHOICES: ReadonlySet<unknown> = new Set(['auto', 'none', 'required']);
const TOOL_KEYS: ReadonlySet<string> = new Set(['type', 'function']);
const FUNCTION_KEYS: ReadonlySet<string> = new Set(['name', 'description', 'parameters', 'strict']);

function hasOnly(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key of Object.keys(value)) if (!keys.has(key)) return false;
  return true;
}

/** The schema's JSON Schema object checks for `parameters`. */
function isParameters(v: unknown): boolean {
  if (!isRecord(v)) return false;
  if (v['type'] !== undefined && v['type'] !== 'object') return false;
  if (v['properties'] !== undefined && !isRecord(v['properties'])) return false;
  const required = v['required'];
  return required === undefined || (Array.isArray(required) && required.every((r) => typeof r === 'string'));
}

function isFunctionTool(t: unknown): boolean {
  if (!isRecord(t) || t['type'] !== 'function' || !hasOnly(t, TOOL_KEYS)) return false;
  const f = t['function'];
  if (!isRecord(f) || !hasOnly(f, FUNCTION_KEYS)) return false;
  if (typeof f['name'] !== 'string' || !FUNCTION_NAME.test(f['name'])) return false;
  if (f['description'] !== undefined && typeof f['description'] !== 'string') return false;
  if (f['parameters'] !== undefined && !isParameters(f['parameters'])) return false;
  return f['strict'] === undefined || f['strict'] === null || typeof f['strict'] === 'boolean';
}

function isFunctionTools(v: unknown): boolean {
  if (!Array.isArray(v) || v.length === 0) return false;
  for (const t of v) if (!isFunctionTool(t)) return false;
  return true;
}

/** A tool as zod writes it: shape keys in shape order, `parameters` a shallow copy. */
function copyTool(t: Record<string, unknown>): Record<string, unknown> {
  const f = t['function'] as Record<string, unknown>;
  const out: Record<string, unknown> = { name: f['name'] };
  if (Object.hasOwn(f, 'description')) out['description'] = f['description'];
  if (Object.hasOwn(f, 'parameters')) out['parameters'] = { ...(f['parameters'] as Record<string, unknown>) };
  if (Object.hasOwn(f, 'strict')) out['strict'] = f['strict'];
  return { type: 'function', function: out };
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
  // The schema's cross-field rule: a tool_choice other than 'none' needs tools.
  if (json['tool_choice'] !== undefined && json['tool_choice'] !== 'none' && json['tools'] === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of FAST_KEYS.keys()) {
    if (!Object.hasOwn(json, key)) continue;
    const value = json[key];
    if (key === 'messages') out[key] = (value as Record<string, unknown>[]).map(copyMessage);
    else if (key === 'tools') out[key] = (value as Record<string, unknown>[]).map(copyTool);
    else out[key] = value;
  }
  for (const key of keys) if (!FAST_KEYS.has(key)) out[key] = json[key];
  return out;
}
