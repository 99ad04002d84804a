// Turns zod issues into one line per problem, each prefixed by its YAML path:
// `exporters.otlphttp/acme.encoding: must be one of json, protobuf`.
import type { z } from 'zod';
import { typedScalar } from './env.js';
import { formatPath, type ConfigPath } from './path.js';

type Issue = z.core.$ZodIssue;
type RawIssue = z.core.$ZodRawIssue;

function describe(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
}

function bound(kind: 'least' | 'most', origin: string, limit: number | bigint, inclusive: boolean | undefined): string {
  const comparison = kind === 'least' ? (inclusive === false ? 'greater than' : 'at least') : inclusive === false ? 'less than' : 'at most';
  if (origin === 'string') {
    if (kind === 'least' && Number(limit) === 1 && inclusive !== false) return 'must not be empty';
    return `must be ${comparison} ${limit} character${Number(limit) === 1 ? '' : 's'} long`;
  }
  if (origin === 'array' || origin === 'set') return `must have ${comparison} ${limit} items`;
  return `must be ${comparison === 'at least' ? '>=' : comparison === 'at most' ? '<=' : comparison === 'greater than' ? '>' : '<'} ${limit}`;
}

/**
 * The per-parse error map: schema-level messages still win (zod gives them
 * precedence), so component authors' own wording survives.
 */
export function configErrorMap(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'required';
      // `record` is zod's word for a mapping of keys the schema does not list; a user wrote an object either way.
      if (issue.expected === 'object' || issue.expected === 'record') return 'must be an object';
      return `must be ${issue.expected === 'array' ? 'an' : 'a'} ${issue.expected === 'int' ? 'integer' : issue.expected}${quotedScalarHint(issue.input, issue.expected)}`;
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${describe(issue.values[0])}` : `must be one of ${issue.values.map(describe).join(', ')}`;
    case 'too_small':
      return bound('least', issue.origin, issue.minimum, issue.inclusive);
    case 'too_big':
      return bound('most', issue.origin, issue.maximum, issue.inclusive);
    case 'invalid_format':
      if (issue.format === 'url') return 'must be a URL';
      if (issue.format === 'regex') return `must match ${issue.pattern ?? 'the expected pattern'}`;
      return `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return 'unknown key';
    case 'invalid_union':
      return unionMessage(issue.errors);
    default:
      return undefined;
  }
}

/** Re-reports a nested parse's problems (worded by configErrorMap, as the outer parse words its own) at their paths; unknown keys one by one, as everywhere else in the config. */
export function forwardIssues(issues: readonly Issue[], ctx: z.RefinementCtx): void {
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') for (const key of issue.keys) ctx.addIssue({ code: 'custom', path: [...issue.path, key], message: 'unknown key' });
    // A bad key of a mapping: its path ends with that key, so the mapping is named instead.
    else if (issue.code === 'invalid_key') for (const inner of issue.issues) ctx.addIssue({ code: 'custom', path: issue.path.slice(0, -1), message: inner.message });
    else ctx.addIssue({ ...issue, code: 'custom', path: issue.path, message: issue.message });
  }
}

const QUOTED_SCALAR = 'a quoted value is a string';

/**
 * Why `"5"` or `"+5"` is no number (nor `"true"` a boolean): quoted (in YAML
 * or a JSON body) it is a string, and a string is not taken where a number is
 * wanted, as in the collector (its config decoding is strictly typed).
 */
function quotedScalarHint(input: unknown, expected: string): string {
  if (typeof input !== 'string') return '';
  const value = typedScalar(input);
  const kind = expected === 'int' ? 'number' : expected;
  return value === undefined || typeof value !== kind ? '' : `, not the string ${JSON.stringify(input)} (${QUOTED_SCALAR}: write the ${kind} without quotes)`;
}

/** Whether a problem line is a number or boolean refused for being written as a string (quotedScalarHint). */
export function isQuotedScalarProblem(line: string): boolean {
  return line.includes(`(${QUOTED_SCALAR}: `);
}

function unionMessage(branches: readonly (readonly Issue[])[]): string {
  const expected = new Set<string>();
  for (const branch of branches) {
    for (const issue of branch) {
      if (issue.code === 'invalid_type') expected.add(issue.expected);
      if (issue.code === 'invalid_value') for (const value of issue.values) expected.add(describe(value));
    }
  }
  return expected.size === 0 ? 'is not valid here' : `must be one of ${[...expected].join(', ')}`;
}

/** The issue's own path, prefixed; a union is reported as the branch that got furthest. */
export function formatIssues(issues: readonly Issue[], prefix: ConfigPath = []): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`${formatPath([...path, key])}: unknown key`);
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0 && !allAtRoot(issue.errors)) {
      lines.push(...formatIssues(closestBranch(issue.errors), path));
    } else if ((issue.code === 'invalid_key' || issue.code === 'invalid_element') && issue.issues.length > 0) {
      lines.push(...formatIssues(issue.issues, path));
    } else {
      lines.push(`${formatPath(path)}: ${issue.message}`);
    }
  }
  return lines;
}

// Every branch failed on the value's own type: the union's message says it best.
function allAtRoot(branches: readonly (readonly Issue[])[]): boolean {
  return branches.every(function rootTypeOnly(branch) {
    return branch.every(function atRoot(issue) {
      return issue.path.length === 0 && (issue.code === 'invalid_type' || issue.code === 'invalid_value');
    });
  });
}

function closestBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] {
  let best = branches[0] ?? [];
  let bestDepth = -1;
  for (const branch of branches) {
    const depth = Math.max(...branch.map(function depthOf(issue) {
      return issue.path.length + (issue.code === 'invalid_type' ? 0 : 0.5);
    }));
    if (depth > bestDepth || (depth === bestDepth && branch.length < best.length)) {
      best = branch;
      bestDepth = depth;
    }
  }
  return best;
}
