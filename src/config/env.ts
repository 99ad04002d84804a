// `${env:NAME}` and `${env:NAME:-default}` in every string of the config, as
// the OpenTelemetry Collector does. `$${` escapes a literal `${`.
//
// A value that is one whole reference and reads as a YAML number or boolean
// (`max_connections: ${env:MAX_CONNECTIONS}`) is also noted as typed: the
// loader gives a key that wants a number or a boolean the typed value, and
// every other key the string, as the collector does.
import { parse as parseYamlScalar } from 'yaml';
import { formatPath, type ConfigPath } from './path.js';

/**
 * In one left-to-right pass: `$${` (a literal `${`, whatever follows), a
 * reference, or the start of a reference that is none of the readable forms.
 */
const TOKEN = /\$\$\{|\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{env:/g;
const WHOLE_REFERENCE = /^\$\{env:[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

export type Environment = Readonly<Record<string, string | undefined>>;

/** A whole-value reference whose text reads as a number or a boolean: its YAML path, that text and that value. */
export interface TypedReference {
  readonly path: ConfigPath;
  readonly text: string;
  readonly value: number | boolean;
}

/**
 * Returns a copy of `value` with every string substituted; problems name the
 * variable and YAML path. Whole-value references that read as a number or a
 * boolean are added to `typed`, keyed by their formatted path.
 */
export function substituteEnv(value: unknown, env: Environment, problems: string[], path: ConfigPath = [], typed?: Map<string, TypedReference>): unknown {
  if (typeof value === 'string') {
    const text = substituteString(value, env, problems, path);
    const scalar = typed === undefined || !isWholeReference(value) ? undefined : typedScalar(text);
    if (scalar !== undefined) typed?.set(formatPath(path), { path, text, value: scalar });
    return text;
  }
  if (Array.isArray(value)) return value.map(function item(element, index) {
    return substituteEnv(element, env, problems, [...path, index], typed);
  });
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // Defined, not assigned: a `__proto__` key stays a key (refused as unknown) instead of becoming the prototype.
    for (const [key, inner] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: substituteEnv(inner, env, problems, [...path, key], typed), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

function isWholeReference(text: string): boolean {
  return WHOLE_REFERENCE.test(text);
}

/** The number or boolean a YAML scalar of this text would be, if it is one. */
export function typedScalar(text: string): number | boolean | undefined {
  let value: unknown;
  try {
    value = parseYamlScalar(text);
  } catch {
    return undefined;
  }
  return typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/** Sets `value` at `path` in a tree substituteEnv made (plain objects and arrays all the way down). */
export function setAtPath(tree: unknown, path: ConfigPath, value: unknown): void {
  let node = tree;
  for (const segment of path.slice(0, -1)) node = (node as Record<PropertyKey, unknown>)[segment];
  const last = path.at(-1);
  if (last !== undefined) Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
}

function substituteString(text: string, env: Environment, problems: string[], path: ConfigPath): string {
  return text.replace(TOKEN, function replace(token: string, name: string | undefined, fallback: string | undefined, at: number) {
    if (token === '$${') return '${';
    if (name === undefined) {
      const shown = text.slice(at, text.indexOf('}', at) + 1 || undefined);
      problems.push(`${formatPath(path)}: ${shown} is not a reference Sluice can read: write \${env:NAME} or \${env:NAME:-default}, NAME of letters, digits and _ not starting with a digit (\$\${ for a literal \${)`);
      return token;
    }
    const set = env[name];
    // As in sh and the OpenTelemetry spec, an empty variable counts as unset when there is a default.
    if (set !== undefined && (set !== '' || fallback === undefined)) return set;
    if (fallback !== undefined) return fallback;
    problems.push(`${formatPath(path)}: environment variable ${name} is not set (use \${env:${name}:-default} to give a default)`);
    return '';
  });
}
