// A component's YAML section deep-merged over its createDefaultConfig():
// objects merge key by key; arrays and scalars replace; null keeps the default
// (`debug:` with nothing after it means "all defaults").

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function deepMerge(base: unknown, override: unknown): unknown {
  if (override === null || override === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) out[key] = deepMerge(base[key], value);
  return out;
}
