// Ordered sampling rules (DESIGN section 6): the first rule whose environment
// equals the trace's and whose path_prefix is blank or begins the trace's path
// decides; a trace no rule matches is dropped; no rules at all keeps 100%.
import { keeps, splitThreshold, thresholdFor, type Threshold } from './threshold.js';

export interface SamplingRule {
  readonly environment: string;
  readonly percentage: number;
  readonly path_prefix?: string | undefined;
}

/** The rule label of counters: the rule's index, or one of these. */
export const NO_RULE = 'no_rule';
export const NO_RULES_CONFIGURED = 'all';

interface CompiledRule {
  readonly label: string;
  readonly environment: string;
  /** '' when blank: matches every path, including an unknown one. */
  readonly pathPrefix: string;
  readonly threshold: Threshold;
}

export interface Decision {
  readonly keep: boolean;
  /** Which rule decided, for the kept/dropped counters. */
  readonly rule: string;
}

const KEEP_ALL: Decision = { keep: true, rule: NO_RULES_CONFIGURED };
const UNMATCHED: Decision = { keep: false, rule: NO_RULE };

export class RuleSet {
  readonly #rules: readonly CompiledRule[];
  /** Rules grouped by environment, in their original order. */
  readonly #byEnvironment = new Map<string, CompiledRule[]>();

  constructor(rules: readonly SamplingRule[]) {
    this.#rules = rules.map(function compile(rule, index): CompiledRule {
      return {
        label: String(index),
        environment: rule.environment,
        pathPrefix: (rule.path_prefix ?? '').trim(),
        threshold: splitThreshold(thresholdFor(rule.percentage)),
      };
    });
    for (const rule of this.#rules) {
      const list = this.#byEnvironment.get(rule.environment) ?? [];
      // Rules after a blank-prefix rule of the same environment can never match.
      const shadowed = list.some((earlier) => earlier.pathPrefix === '');
      if (!shadowed) list.push(rule);
      this.#byEnvironment.set(rule.environment, list);
    }
  }

  get empty(): boolean {
    return this.#rules.length === 0;
  }

  /** The exact decision for a trace; `path` undefined means "no known path". */
  decide(traceId: Uint8Array, environment: string | undefined, path: string | undefined): Decision {
    if (this.#rules.length === 0) return KEEP_ALL;
    const candidates = environment === undefined ? undefined : this.#byEnvironment.get(environment);
    if (candidates === undefined) return UNMATCHED;
    for (const rule of candidates) {
      if (rule.pathPrefix === '' || (path !== undefined && path.startsWith(rule.pathPrefix))) {
        return { keep: keeps(traceId, rule.threshold), rule: rule.label };
      }
    }
    return UNMATCHED;
  }

  /** Whether some rule names this environment. */
  hasRulesFor(environment: string | undefined): boolean {
    return environment !== undefined && this.#byEnvironment.has(environment);
  }

  /**
   * The decision when it does not depend on the path: every rule that could
   * match in this environment (and "no match" when a path could miss them
   * all) gives the same keep/drop for this trace id. Undefined when the path
   * matters. It is counted under the rule a trace without a path would get.
   */
  decideWithoutPath(traceId: Uint8Array, environment: string | undefined): Decision | undefined {
    if (this.#rules.length === 0) return KEEP_ALL;
    const candidates = environment === undefined ? undefined : this.#byEnvironment.get(environment);
    if (candidates === undefined) return UNMATCHED;
    let outcome: boolean | undefined;
    for (const rule of candidates) {
      const keep = keeps(traceId, rule.threshold);
      if (outcome !== undefined && keep !== outcome) return undefined;
      outcome = keep;
      if (rule.pathPrefix === '') return this.decide(traceId, environment, undefined);
    }
    // Some path matches none of the prefixes, so "dropped" is a possible outcome too.
    return outcome === false ? UNMATCHED : undefined;
  }
}
