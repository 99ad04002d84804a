// How deep the JSON a request carries may nest: the body itself, and JSON
// inside its strings that adapters parse (a tool call's arguments, a tool
// result sent on as an object).

/**
 * How deep a request body's arrays and objects may nest, the body itself
 * being the first level. JSON.parse takes any depth, but what the gateway
 * does with a request walks it recursively (the raw-text check, a tool
 * schema translated for another provider, the body serialized for an
 * upstream), and a body nested thousands deep overflowed the stack into a
 * 500. OpenAI's structured outputs cap a schema's nesting at a handful of
 * levels: this is far above what any request needs.
 */
export const MAX_JSON_DEPTH = 128;

/** Whether parsed JSON holds arrays or objects more than MAX_JSON_DEPTH levels deep, counting itself. */
export function nestsTooDeep(json: unknown): boolean {
  return typeof json === 'object' && json !== null && nestsDeeper(json, MAX_JSON_DEPTH);
}

/** Whether `value` holds arrays or objects more than `levels` deep, counting itself; recurses at most `levels` calls deep. */
function nestsDeeper(value: object, levels: number): boolean {
  if (levels === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (typeof item === 'object' && item !== null && nestsDeeper(item, levels - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (typeof item === 'object' && item !== null && nestsDeeper(item, levels - 1)) return true;
  }
  return false;
}
