// JSON Schema (as OpenAI tools carry it) -> the OpenAPI 3.0 subset Gemini's
// `Schema` accepts. Gemini rejects unknown keys ($schema, additionalProperties,
// $ref/$defs, default, examples, const, oneOf, allOf, ...), so the mapping
// keeps a list of known keys and rewrites the common constructs it can:
// $ref is inlined from $defs/definitions, `type: [x, "null"]` becomes
// `nullable`, `const` a one-value enum, `oneOf` `anyOf`, `allOf` its entries
// merged, and a `{type: "null"}` variant of `anyOf` (Pydantic's `Optional`)
// `nullable`, as Google's own SDKs rewrite it. Gemini also refuses a node
// without a type (outside a union) and an ARRAY without items, failing the
// whole request: each node gets the type its contents imply, and a node that
// allows any value (`{}`, `true`) is a STRING. https://ai.google.dev/api/caching#Schema
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
  if (Array.isArray(schema['allOf'])) {
    const merged = mergeAllOf(schema, schema['allOf'], root, nextRefs);
    return convert(merged.schema, root, merged.refs);
  }

  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) if (KEPT_KEYS.has(key)) out[key] = value;
  applyType(schema['type'], out);

  const given = schema['const'] !== undefined ? [schema['const']] : schema['enum'];
  const enumValues = Array.isArray(given) ? given.filter((value) => value !== null) : undefined;
  if (enumValues !== undefined && enumValues.length < (given as unknown[]).length) out['nullable'] = true;
  if (enumValues !== undefined && enumValues.length > 0 && enumValues.every((value) => typeof value === 'string')) {
    out['enum'] = enumValues;
    out['type'] ??= 'STRING';
  }
  const format = schema['format'];
  if (typeof format === 'string' && typeof out['type'] === 'string' && FORMATS[out['type']]?.has(format) === true) out['format'] = format;

  // Gemini takes properties on an OBJECT only and items on an ARRAY only.
  const properties = asObject(schema['properties']);
  if (properties !== undefined && (out['type'] ?? 'OBJECT') === 'OBJECT') {
    const mapped: JsonObject = {};
    for (const [name, value] of Object.entries(properties)) mapped[name] = convert(asObject(value) ?? {}, root, nextRefs);
    out['properties'] = mapped;
    if (Array.isArray(schema['required'])) out['required'] = schema['required'].filter((name) => typeof name === 'string' && name in mapped);
  }
  const items = asObject(schema['items']);
  if (items !== undefined && (out['type'] ?? 'ARRAY') === 'ARRAY') out['items'] = convert(items, root, nextRefs);
  const variants = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(variants)) return withVariants(out, variants.map((variant) => asObject(variant) ?? {}), root, nextRefs, enumValues);
  return typed(out, enumValues);
}

/**
 * `allOf` as one schema: the properties and required of its entries joined,
 * their other keys taken where the schema has none (its own keys win, as
 * beside a `$ref`). Returns the refs followed, so a cycle through an entry ends.
 */
function mergeAllOf(schema: JsonObject, entries: readonly unknown[], root: JsonObject, refs: readonly string[]): { schema: JsonObject; refs: readonly string[] } {
  const { allOf: _drop, ...merged } = schema;
  let followed = refs;
  for (const entry of entries) {
    const object = asObject(entry);
    const resolved = object === undefined ? undefined : resolveRef(object, root, followed);
    if (resolved === undefined) continue;
    if (typeof object?.['$ref'] === 'string') followed = [...followed, object['$ref']];
    for (const [key, value] of Object.entries(resolved)) {
      if (key === 'properties') merged['properties'] = { ...asObject(merged['properties']), ...asObject(value) };
      else if (key === 'required') merged['required'] = [...(Array.isArray(merged['required']) ? merged['required'] : []), ...(Array.isArray(value) ? value : [])];
      else if (!(key in merged)) merged[key] = value;
    }
  }
  return { schema: merged, refs: followed };
}

/**
 * `out` with the type Gemini requires of every node outside a union: the one
 * its properties, items or enum values imply, else STRING (a schema that
 * allows any value, which Gemini cannot say). An ARRAY gets items likewise.
 */
function typed(out: JsonObject, enumValues: readonly unknown[] | undefined): JsonObject {
  if (out['type'] === undefined && out['anyOf'] === undefined) {
    out['type'] = out['properties'] !== undefined ? 'OBJECT' : out['items'] !== undefined ? 'ARRAY' : valueType(enumValues ?? []);
  }
  if (out['type'] === 'ARRAY' && out['items'] === undefined) out['items'] = { type: 'STRING' };
  return out;
}

/** The type every value of an enum (or a const) has, when they share one; STRING otherwise. */
function valueType(values: readonly unknown[]): string {
  if (values.length === 0) return 'STRING';
  if (values.every((value) => typeof value === 'boolean')) return 'BOOLEAN';
  if (values.every((value) => Number.isInteger(value))) return 'INTEGER';
  if (values.every((value) => typeof value === 'number')) return 'NUMBER';
  return 'STRING';
}

/** Keys that say what kind of value a schema is; a variant without any of them only narrows its parent. */
const SHAPE_KEYS = ['type', 'properties', 'items', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', '$ref'];

/**
 * `anyOf` without its null variants, which make the schema `nullable`
 * instead (OpenAPI 3.0 has no null type), and, under a typed schema, without
 * the variants that only narrow it (`{required: [...]}`), which Gemini cannot
 * say; one variant left is inlined, the schema's own keys (its description) winning.
 */
function withVariants(out: JsonObject, variants: readonly JsonObject[], root: JsonObject, refs: readonly string[], enumValues: readonly unknown[] | undefined): JsonObject {
  const kept = variants.filter((variant) => variant['type'] !== 'null' && (out['type'] === undefined || SHAPE_KEYS.some((key) => key in variant)));
  if (variants.some((variant) => variant['type'] === 'null')) out['nullable'] = true;
  const mapped = kept.map((variant) => convert(variant, root, refs));
  if (mapped.length === 1 && mapped[0] !== undefined) return { ...mapped[0], ...out };
  if (mapped.length > 1) out['anyOf'] = mapped;
  return typed(out, enumValues);
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

/**
 * Whether the OpenAPI form holds an OBJECT without properties below its root
 * (a map given by `additionalProperties`, any object, a cycle cut short).
 * Gemini refuses one ("properties: should be non-empty for OBJECT type"), so
 * such a schema goes as JSON Schema instead (`parametersJsonSchema`,
 * `responseJsonSchema`), which can say it.
 */
export function holdsFreeFormObject(schema: JsonObject): boolean {
  const children = [...Object.values(asObject(schema['properties']) ?? {}), schema['items'], ...(Array.isArray(schema['anyOf']) ? schema['anyOf'] : [])];
  return children.some((child) => {
    const node = asObject(child);
    if (node === undefined) return false;
    return (node['type'] === 'OBJECT' && Object.keys(asObject(node['properties']) ?? {}).length === 0) || holdsFreeFormObject(node);
  });
}

/** Keywords whose value is a map of schemas, a list of schemas, or one schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SCHEMA_VALUES = new Set(['items', 'additionalProperties', 'not', 'contains', 'propertyNames']);

/**
 * The client's JSON Schema as Gemini's JSON Schema fields take it: beside a
 * `$ref` only `$` keywords (Gemini refuses others there), and draft-07
 * `definitions` as `$defs`, the one it resolves.
 */
export function toGeminiJsonSchema(schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  const ref = schema['$ref'];
  for (const [key, value] of Object.entries(schema)) {
    if (typeof ref === 'string' && !key.startsWith('$')) continue;
    if (key === '$ref' && typeof value === 'string') out[key] = value.replace(/^#\/definitions\//, '#/$defs/');
    else if (SCHEMA_MAPS.has(key) && asObject(value) !== undefined) out[key === 'definitions' ? '$defs' : key] = mapValues(asObject(value) ?? {}, jsonSubschema);
    else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(jsonSubschema);
    else if (SCHEMA_VALUES.has(key)) out[key] = jsonSubschema(value);
    else out[key] = value;
  }
  return out;
}

function jsonSubschema(value: unknown): unknown {
  const object = asObject(value);
  return object === undefined ? value : toGeminiJsonSchema(object);
}

function mapValues(object: JsonObject, map: (value: unknown) => unknown): JsonObject {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, map(value)]));
}
