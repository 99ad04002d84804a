// `${env:NAME}` and `${env:NAME:-default}` in every string of the config, as
// the OpenTelemetry Collector does. `$${` escapes a literal `${`.
import { formatPath, type ConfigPath } from './path.js';

const REFERENCE = /\$(\$)?\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
/** Where a reference starts (escaped or not); one REFERENCE does not match there is malformed. */
const REFERENCE_START = /\$(\$)?\{env:/g;
const WHOLE_REFERENCE = new RegExp(REFERENCE.source, 'y');

export type Environment = Readonly<Record<string, string | undefined>>;

/** Returns a copy of `value` with every string substituted; problems name the variable and YAML path. */
export function substituteEnv(value: unknown, env: Environment, problems: string[], path: ConfigPath = []): unknown {
  if (typeof value === 'string') return substituteString(value, env, problems, path);
  if (Array.isArray(value)) return value.map(function item(element, index) {
    return substituteEnv(element, env, problems, [...path, index]);
  });
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // Defined, not assigned: a `__proto__` key stays a key (refused as unknown) instead of becoming the prototype.
    for (const [key, inner] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: substituteEnv(inner, env, problems, [...path, key]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

function substituteString(text: string, env: Environment, problems: string[], path: ConfigPath): string {
  for (const start of text.matchAll(REFERENCE_START)) {
    if (start[1] !== undefined) continue;
    WHOLE_REFERENCE.lastIndex = start.index;
    if (!WHOLE_REFERENCE.test(text)) {
      const shown = text.slice(start.index, text.indexOf('}', start.index) + 1 || undefined);
      problems.push(`${formatPath(path)}: ${shown} is not a reference Sluice can read: write \${env:NAME} or \${env:NAME:-default}, NAME of letters, digits and _ not starting with a digit (\$\${ for a literal \${)`);
    }
  }
  return text.replace(REFERENCE, function replace(whole: string, escaped: string | undefined, name: string, fallback: string | undefined) {
    if (escaped !== undefined) return whole.slice(1);
    const set = env[name];
    // As in sh and the OpenTelemetry spec, an empty variable counts as unset when there is a default.
    if (set !== undefined && (set !== '' || fallback === undefined)) return set;
    if (fallback !== undefined) return fallback;
    problems.push(`${formatPath(path)}: environment variable ${name} is not set (use \${env:${name}:-default} to give a default)`);
    return '';
  });
}
