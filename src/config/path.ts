// YAML paths as users read them: `exporters.otlphttp/acme.encoding`, `drains[0].url`.

export type ConfigPath = readonly PropertyKey[];

export function formatPath(path: ConfigPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? '(root)' : out;
}

export function withPrefix(prefix: ConfigPath, message: string): string {
  return prefix.length === 0 ? message : `${formatPath(prefix)}: ${message}`;
}
