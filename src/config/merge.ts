// A component's YAML section deep-merged over its createDefaultConfig():
// objects merge key by key; arrays and scalars replace; null keeps the default
// (`debug:` with nothing after it means "all defaults").
import { isPlainObject } from '../shared/plain-object.js';

export function deepMerge(base: unknown, override: unknown): unknown {
  if (override === null || override === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) out[key] = deepMerge(base[key], value);
  return out;
}
