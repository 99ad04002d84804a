// `${env:NAME}` and `${env:NAME:-default}` in every string of the config, as
// the OpenTelemetry Collector does. `$${` escapes a literal `${`.
import { formatPath, type ConfigPath } from './path.js';

const REFERENCE = /\$(\$)?\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Environment = Readonly<Record<string, string | undefined>>;

/** Returns a copy of `value` with every string substituted; problems name the variable and YAML path. */
export function substituteEnv(value: unknown, env: Environment, problems: string[], path: ConfigPath = []): unknown {
  if (typeof value === 'string') return substituteString(value, env, problems, path);
  if (Array.isArray(value)) return value.map(function item(element, index) {
    return substituteEnv(element, env, problems, [...path, index]);
  });
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = substituteEnv(inner, env, problems, [...path, key]);
    return out;
  }
  return value;
}

function substituteString(text: string, env: Environment, problems: string[], path: ConfigPath): string {
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
