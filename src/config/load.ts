// Reading a config file: YAML, then ${env:...} substitution, then validation.
import { readFile } from 'node:fs/promises';
import { type Document, isAlias, isCollection, isScalar, LineCounter, type Node, parseDocument, type Scalar, visit, type YAMLError } from 'yaml';
import { ConfigError, errorMessage } from '../shared/errors.js';
import type { ComponentRegistry } from '../core/registry.js';
import { type Environment, setAtPath, substituteEnv, type TypedReference } from './env.js';
import { isQuotedScalarProblem } from './format-issues.js';
import { type ValidatedConfig, validateConfig } from './validate.js';

export interface LoadOptions {
  readonly registry: ComponentRegistry;
  readonly env?: Environment;
}

/** Parses YAML text; YAML syntax errors and unset variables are reported with the schema problems. */
export function parseConfigText(text: string, options: LoadOptions, source = 'config'): ValidatedConfig {
  const lineCounter = new LineCounter();
  // Merge keys (`<<: *defaults`) are not YAML 1.2, but go-yaml, and so the collector, reads them.
  const doc = parseDocument(text, { prettyErrors: false, lineCounter, merge: true });
  if (doc.errors.length > 0) {
    const problem = (error: YAMLError, message = error.message) => {
      const at = lineCounter.linePos(error.pos[0]);
      return `${source}:${at.line}:${at.col}: ${message}`;
    };
    // `{ b: ${env:X} }`: in a flow collection `{` ends a plain scalar, and every error after it follows from this one.
    const unquoted = doc.errors.find((error) => isReferenceAt(text, error.pos[0]));
    if (unquoted !== undefined) throw new ConfigError([problem(unquoted, `${unquoted.message} (inside { } or [ ], quote a reference: "\${env:NAME}")`)]);
    throw new ConfigError(doc.errors.map(function yamlProblem(error) {
      // The library's own words point to its API (`use YAML.parseAllDocuments()`).
      if (error.code === 'MULTIPLE_DOCS') return problem(error, 'a config file holds one YAML document: this `---` starts a second');
      // Its words name no key ("Map keys must be unique").
      if (error.code === 'DUPLICATE_KEY') return problem(error, duplicateKeyMessage(doc, lineCounter, error.pos[0]) ?? error.message);
      return problem(error);
    }));
  }
  // An alias inside its own anchor's node makes a cycle, which every walk of the tree would follow forever;
  // an alias of no anchor (set nowhere, or only below it) is named where it is.
  const alias = aliasProblem(doc);
  if (alias !== undefined) {
    const at = lineCounter.linePos(alias.offset);
    const problem = alias.selfReferring
      ? `*${alias.name} is inside the node it names (&${alias.name}): a config cannot refer to itself`
      : `*${alias.name} names no anchor set above it (&${alias.name})`;
    throw new ConfigError([`${source}:${at.line}:${at.col}: ${problem}`]);
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    // Aliases that would expand past maxAliasCount nodes (a "billion laughs" file).
    throw new ConfigError([`${source}: ${errorMessage(err)}`]);
  }
  const envProblems: string[] = [];
  const typed = new Map<string, TypedReference>();
  const tree = substituteEnv(raw, options.env ?? process.env, envProblems, [], typed);
  let config: ValidatedConfig;
  try {
    config = validateTyped(tree, options.registry, typed);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError([...envProblems, ...err.problems]);
    throw err;
  }
  if (envProblems.length > 0) throw new ConfigError(envProblems);
  return config;
}

/** `key "b" is already set on line 2 of this mapping`, for the repeated key at `offset`, as go-yaml (the collector's reader) names it. */
function duplicateKeyMessage(doc: Document, lineCounter: LineCounter, offset: number): string | undefined {
  let message: string | undefined;
  visit(doc, {
    Map(_, map) {
      const keys = map.items.map((pair) => pair.key);
      const repeated = keys.findIndex((key) => isScalar(key) && key.range?.[0] === offset);
      if (repeated < 0) return undefined;
      const value = (keys[repeated] as Scalar).value;
      const first = keys.find((key) => isScalar(key) && key.value === value);
      const line = isScalar(first) && first.range !== undefined && first.range !== null ? lineCounter.linePos(first.range[0]).line : undefined;
      message = `key ${JSON.stringify(value)} is already set${line === undefined ? '' : ` on line ${line}`} of this mapping: YAML keys must be unique`;
      return visit.BREAK;
    },
  });
  return message;
}

/**
 * The first alias that names no anchor set before it, or that lies inside the
 * node its anchor is set on, with its name and offset. One walk in document
 * order, keeping each name's latest anchor as the library resolves it
 * (`Alias.resolve` walks the whole document for each alias: quadratic in a
 * file of thousands of aliases).
 */
function aliasProblem(doc: Document): { name: string; offset: number; selfReferring: boolean } | undefined {
  const anchors = new Map<string, Node>();
  let found: { name: string; offset: number; selfReferring: boolean } | undefined;
  visit(doc, function anchorOrAlias(_, node, path) {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target !== undefined && !path.includes(target)) return undefined;
      found = { name: node.source, offset: node.range?.[0] ?? 0, selfReferring: target !== undefined };
      return visit.BREAK;
    }
    if ((isScalar(node) || isCollection(node)) && node.anchor !== undefined && node.anchor !== '') anchors.set(node.anchor, node);
    return undefined;
  });
  return found;
}

/** Whether a `${env:` starts at, or just before, this offset. */
function isReferenceAt(text: string, offset: number): boolean {
  return text.startsWith('${env:', offset) || text.startsWith('${env:', offset - 1);
}

/**
 * Validates the substituted tree. Where a key refused the string a whole
 * `${env:...}` reference gave it and that string reads as a number or a
 * boolean, the typed value is put there instead and the tree is validated
 * again: a key that wants a string keeps the string. A typed value the key
 * refuses as well goes back to the string, so the problem reported is the
 * string's (`must be a decimal string like ...`), not the number's
 * (`must be a string`); unless the key refused the string for being one (it
 * wants a number): then the number's problem is the one (`must be > 0`).
 */
function validateTyped(tree: unknown, registry: ComponentRegistry, typed: ReadonlyMap<string, TypedReference>): ValidatedConfig {
  const retyped = new Map<string, TypedReference>();
  try {
    return validateConfig(tree, registry);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const at of problemPaths(err)) {
      const reference = typed.get(at);
      if (reference === undefined) continue;
      retyped.set(at, reference);
      setAtPath(tree, reference.path, reference.value);
    }
    if (retyped.size === 0) throw err;
  }
  try {
    return validateConfig(tree, registry);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const typedProblems = err.problems;
    let restored = false;
    for (const at of problemPaths(err)) {
      const reference = retyped.get(at);
      if (reference === undefined) continue;
      setAtPath(tree, reference.path, reference.text);
      restored = true;
    }
    if (!restored) throw err;
    try {
      return validateConfig(tree, registry);
    } catch (stringErr) {
      if (!(stringErr instanceof ConfigError)) throw stringErr;
      throw new ConfigError(stringErr.problems.flatMap(function problemOfWantedType(line) {
        const at = pathOf(line);
        if (!retyped.has(at) || !isQuotedScalarProblem(line)) return [line];
        return typedProblems.filter((typedLine) => pathOf(typedLine) === at);
      }));
    }
  }
}

function pathOf(problem: string): string {
  return problem.slice(0, problem.indexOf(': '));
}

/** The YAML paths a ConfigError's problems name (`path: message`). */
function problemPaths(err: ConfigError): Set<string> {
  return new Set(err.problems.map(pathOf));
}

export async function loadConfigFile(file: string, options: LoadOptions): Promise<ValidatedConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${file}: cannot read the config file: ${errorMessage(err)}`]);
  }
  return parseConfigText(text, options, file);
}
