// A zod failure as one message naming the request field (`messages[0].content`),
// descending into unions to the branch that got furthest. Every protocol's
// request validation answers with it.
import type { z } from 'zod';

export interface ValidationProblem {
  message: string;
  /** The field at fault; null when the problem is the whole body (OpenAI's errors say null when no parameter applies). */
  param: string | null;
}

type Issue = z.core.$ZodIssue;

/** The first problem, descending into unions to the branch that got furthest. */
export function firstProblem(error: z.ZodError): ValidationProblem {
  const issue = deepest(error.issues[0], []);
  if (issue.path.length === 0) return { message: `The request body ${issue.message}`, param: null };
  const param = formatParam(issue.path);
  return { message: `${param}: ${issue.message}`, param };
}

/**
 * The branch of a union that came closest: the one with the fewest issues
 * among those whose type matched the value, and of those the one whose first
 * issue lies deepest. 3,000 strings for embeddings' `input` (at most 2,048)
 * are one issue to the array-of-strings branch and 3,000 to the array-of-
 * token-arrays one: the first says what is wrong.
 */
function deepest(issue: Issue | undefined, prefix: PropertyKey[]): { path: PropertyKey[]; message: string } {
  if (issue === undefined) return { path: prefix, message: 'invalid request' };
  const path = [...prefix, ...issue.path];
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return { path, message: describe(issue) };
  let best: { path: PropertyKey[]; message: string; issues: number } | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    // A branch of another type than the value's says nothing about it.
    if (first === undefined || (first.code === 'invalid_type' && first.path.length === 0)) continue;
    const candidate = { ...deepest(first, path), issues: branch.length };
    if (best === undefined || candidate.issues < best.issues || (candidate.issues === best.issues && candidate.path.length > best.path.length)) best = candidate;
  }
  // No branch took the value's type: say so instead of picking one arbitrarily.
  return best === undefined ? { path, message: 'has an invalid type or shape' } : { path: best.path, message: best.message };
}

function describe(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (isMissing(issue)) return 'is required';
      // JSON.parse reads a number past a double's range (1e400) as Infinity, which zod calls no number.
      if (isInfinite(issue)) return 'must be a finite number';
      return `must be ${issue.expected === 'int' ? 'an integer' : `of type ${issue.expected}`}`;
    case 'too_small':
      return issue.origin === 'array' ? `must have at least ${issue.minimum} ${issue.minimum === 1 ? 'item' : 'items'}` : issue.origin === 'string' ? (issue.minimum === 1 ? 'must not be empty' : `must not be shorter than ${issue.minimum} characters`) : `must be ${issue.inclusive === false ? '>' : '>='} ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'array' ? `must have at most ${issue.maximum} items` : `must be ${issue.inclusive === false ? '<' : '<='} ${issue.maximum}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message;
  }
}

/**
 * Whether an invalid_type issue is about an absent field. zod 4 leaves
 * `input` out of issues unless parsing asked for it (`reportInput`), so its
 * own wording ("expected string, received undefined") is the fallback.
 */
export function isMissing(issue: z.core.$ZodIssueInvalidType): boolean {
  return 'input' in issue ? issue.input === undefined : issue.message.endsWith('received undefined');
}

/** Whether an invalid_type issue is about an infinite number; zod says so only in its own words ("received Infinity"). */
function isInfinite(issue: z.core.$ZodIssueInvalidType): boolean {
  return 'input' in issue ? issue.input === Infinity || issue.input === -Infinity : /received -?Infinity$/.test(issue.message);
}

/** ['messages', 0, 'content'] -> messages[0].content */
export function formatParam(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

