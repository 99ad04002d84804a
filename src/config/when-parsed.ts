// zod skips an object's refinements once any key failed, so a cross-reference
// (a model naming an unknown provider) was reported only after every shape
// problem was fixed. A refinement given `when: keysParsed(...)` runs as soon
// as the keys it reads parsed, and its problems come in the same run.
import type { z } from 'zod';

export function keysParsed(...keys: readonly string[]): (payload: z.core.ParsePayload) => boolean {
  return function readKeysParsed(payload) {
    return !payload.issues.some(function blocks(issue) {
      const first = issue.path?.[0];
      return first === undefined || keys.includes(String(first));
    });
  };
}
