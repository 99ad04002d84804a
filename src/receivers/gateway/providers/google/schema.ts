// JSON Schema (as OpenAI tools carry it) -> the OpenAPI 3.0 subset Gemini's
// `Schema` accepts. Gemini rejects unknown keys ($schema, additionalProperties,
// $ref/$defs, default, examples, const, oneOf, allOf, ...), so the mapping
// keeps a list of known keys and rewrites the common constructs it can:
// $ref is inlined from $defs/definitions, `type: [x, "null"]` becomes
// `nullable`, `const` a one-value enum, `oneOf` `anyOf`, a one-entry `allOf`
// its entry, and a `{type: "null"}` variant of `anyOf` (Pydantic's `Optional`)
// `nullable`, as Google's own SDKs rewrite it. https://ai.google.dev/api/caching#Schema
import { asObject } from '../shared/inputs.js';

type JsonObject = Record<string, unknown>;

/** Keys copied as they are (after their values are mapped). */
const KEPT_KEYS = new Set([
  'description', 'nullable', 'minItems', 'maxItems', 'minimum', 'maximum', 'minLength', 'maxLength',
  'pattern', 'minProperties', 'maxProperties', 'propertyOrdering',
]);

/** Formats Gemini accepts, per type; others are dropped (it rejects them). */
const FORMATS: Readonly<Record<string, ReadonlySet<string>>> = {
  STRING: new Set(['enum', 'date-time']),
  INTEGER: new Set(['int32', 'int64']),
  NUMBER: new Set(['float', 'double']),
};

const MAX_REF_DEPTH = 8;

export function toGeminiSchema(schema: JsonObject): JsonObject {
  return convert(schema, schema, []);
}

function convert(input: JsonObject, root: JsonObject, refs: readonly string[]): JsonObject {
  const schema = resolveRef(input, root, refs);
  if (schema === undefined) return { type: 'OBJECT' };
  const nextRefs = typeof input['$ref'] === 'string' ? [...refs, input['$ref']] : refs;
  const allOf = Array.isArray(schema['allOf']) ? schema['allOf'] : undefined;
  if (allOf?.length === 1 && asObject(allOf[0]) !== undefined) {
    const { allOf: _drop, ...rest } = schema;
    return convert({ ...rest, ...asObject(allOf[0]) }, root, nextRefs);
  }

  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) if (KEPT_KEYS.has(key)) out[key] = value;
  applyType(schema['type'], out);

  const enumValues = schema['const'] !== undefined ? [schema['const']] : schema['enum'];
  if (Array.isArray(enumValues) && enumValues.every((value) => typeof value === 'string')) {
    out['enum'] = enumValues;
    out['type'] ??= 'STRING';
  }
  const format = schema['format'];
  if (typeof format === 'string' && typeof out['type'] === 'string' && FORMATS[out['type']]?.has(format) === true) out['format'] = format;

  const properties = asObject(schema['properties']);
  if (properties !== undefined) {
    const mapped: JsonObject = {};
    for (const [name, value] of Object.entries(properties)) mapped[name] = convert(asObject(value) ?? {}, root, nextRefs);
    out['properties'] = mapped;
    if (Array.isArray(schema['required'])) out['required'] = schema['required'].filter((name) => typeof name === 'string' && name in mapped);
  }
  const items = asObject(schema['items']);
  if (items !== undefined) out['items'] = convert(items, root, nextRefs);
  const variants = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(variants)) return withVariants(out, variants.map((variant) => asObject(variant) ?? {}), root, nextRefs);
  return out;
}

/**
 * `anyOf` without its null variants, which make the schema `nullable`
 * instead (OpenAPI 3.0 has no null type); one variant left is inlined, the
 * schema's own keys (its description) winning.
 */
function withVariants(out: JsonObject, variants: readonly JsonObject[], root: JsonObject, refs: readonly string[]): JsonObject {
  const kept = variants.filter((variant) => variant['type'] !== 'null');
  if (kept.length < variants.length) out['nullable'] = true;
  const mapped = kept.map((variant) => convert(variant, root, refs));
  if (mapped.length === 1 && mapped[0] !== undefined) return { ...mapped[0], ...out };
  if (mapped.length > 1) out['anyOf'] = mapped;
  return out;
}

/** `type` as Gemini's upper-case enum; a list with "null" becomes nullable, other lists anyOf. */
function applyType(type: unknown, out: JsonObject): void {
  if (typeof type === 'string') {
    if (type === 'null') out['nullable'] = true;
    else out['type'] = type.toUpperCase();
    return;
  }
  if (!Array.isArray(type)) return;
  const types = type.filter((entry): entry is string => typeof entry === 'string' && entry !== 'null');
  if (types.length < type.length) out['nullable'] = true;
  if (types.length === 1 && types[0] !== undefined) out['type'] = types[0].toUpperCase();
  else if (types.length > 1) out['anyOf'] = types.map((entry) => ({ type: entry.toUpperCase() }));
}

/** Follows a local `$ref` (#/$defs/X or #/definitions/X); undefined for a cycle, a deep chain or a ref it cannot follow. */
function resolveRef(schema: JsonObject, root: JsonObject, refs: readonly string[]): JsonObject | undefined {
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  if (refs.includes(ref) || refs.length >= MAX_REF_DEPTH) return undefined;
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  const name = pointerToken(match[2]);
  if (name === undefined) return undefined;
  const target = asObject(asObject(root[match[1]])?.[name]);
  if (target === undefined) return undefined;
  // Sibling keywords of $ref (description, mostly) win over the target's.
  const { $ref: _ref, ...siblings } = schema;
  return { ...target, ...siblings };
}

/** A JSON Pointer token of a `$ref` fragment, unescaped; undefined when its percent-escapes are malformed. */
function pointerToken(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded).replaceAll('~1', '/').replaceAll('~0', '~');
  } catch {
    return undefined;
  }
}
