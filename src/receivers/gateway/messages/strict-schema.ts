// Whether a tool's input_schema is one OpenAI's strict function calling
// takes. Anthropic's `strict: true` (inputs sampled to follow the schema)
// asks every object to close its properties (additionalProperties: false)
// but lets some be optional; OpenAI's refuses the whole request unless every
// object also lists all its properties as required (an optional one is a
// required one that may be null), and takes no composition but anyOf.

/** Keys whose values are data, not schemas: an object there is no object schema. */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples']);

/**
 * Keywords OpenAI's strict mode refuses wherever they stand ("'allOf' is not
 * permitted"); Anthropic's takes allOf.
 * https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
 */
const UNSUPPORTED_KEYWORDS = new Set(['allOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas']);

export function meetsOpenAiStrict(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(meetsOpenAiStrict);
  if (typeof schema !== 'object' || schema === null) return true;
  const node = schema as Record<string, unknown>;
  if (isObjectSchema(node) && !closesAllProperties(node)) return false;
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYS.has(key)) continue;
    if (UNSUPPORTED_KEYWORDS.has(key)) return false;
    // Under these keys each value is a schema, named by its key.
    if (key === 'properties' || key === '$defs' || key === 'definitions') {
      if (typeof value === 'object' && value !== null && !Object.values(value).every(meetsOpenAiStrict)) return false;
    } else if (!meetsOpenAiStrict(value)) return false;
  }
  return true;
}

function isObjectSchema(node: Record<string, unknown>): boolean {
  const type = node['type'];
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || node['properties'] !== undefined;
}

function closesAllProperties(node: Record<string, unknown>): boolean {
  if (node['additionalProperties'] !== false) return false;
  const properties = node['properties'];
  const names = typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
  const required = node['required'];
  return names.every((name) => Array.isArray(required) && required.includes(name));
}
