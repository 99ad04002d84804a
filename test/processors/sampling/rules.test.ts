import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_RULE, RuleSet } from '../../../src/processors/sampling/rules.js';

const ALL = new Uint8Array(16).fill(0xff); // R = 2^56 - 1: kept by any percentage above 0
const NONE = new Uint8Array(16); // R = 0: dropped by any percentage below 100

describe('sampling rules', () => {
  it('evaluates top to bottom and the first matching rule decides', () => {
    const rules = new RuleSet([
      { environment: 'production', percentage: 0, path_prefix: '/api' },
      { environment: 'production', percentage: 100 },
    ]);
    expect(rules.decide(ALL, 'production', '/api/cart')).toEqual({ keep: false, rule: '0' });
    expect(rules.decide(ALL, 'production', '/home')).toEqual({ keep: true, rule: '1' });
  });

  it('a blank path_prefix matches every path, an unknown one included', () => {
    const rules = new RuleSet([{ environment: 'production', percentage: 100, path_prefix: '  ' }]);
    expect(rules.decide(NONE, 'production', '/anything').keep).toBe(true);
    expect(rules.decide(NONE, 'production', undefined).keep).toBe(true);
  });

  it('a path_prefix matches paths it begins and no others', () => {
    const rules = new RuleSet([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    expect(rules.decide(NONE, 'production', '/api').keep).toBe(true);
    expect(rules.decide(NONE, 'production', '/apis/x').keep).toBe(true);
    expect(rules.decide(NONE, 'production', '/web/api')).toEqual({ keep: false, rule: NO_RULE });
    expect(rules.decide(NONE, 'production', undefined)).toEqual({ keep: false, rule: NO_RULE });
  });

  it('a rule of another environment does not match', () => {
    const rules = new RuleSet([{ environment: 'preview', percentage: 100 }]);
    expect(rules.decide(ALL, 'production', '/')).toEqual({ keep: false, rule: NO_RULE });
    expect(rules.decide(ALL, undefined, '/')).toEqual({ keep: false, rule: NO_RULE });
  });

  it('no rules at all keeps every trace', () => {
    const rules = new RuleSet([]);
    expect(rules.decide(NONE, undefined, undefined).keep).toBe(true);
    expect(rules.decideWithoutPath(NONE, 'x')?.keep).toBe(true);
  });

  it('a trace no rule matches is dropped', () => {
    const rules = new RuleSet([{ environment: 'production', percentage: 100, path_prefix: '/api' }]);
    expect(rules.decide(ALL, 'production', '/web').keep).toBe(false);
  });

  it('decides without the path only when the path cannot change the outcome', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.array(fc.record({ environment: fc.constantFrom('production', 'preview'), percentage: fc.constantFrom(0, 10, 50, 100), path_prefix: fc.constantFrom('', '/a', '/a/b', '/c') }), { maxLength: 5 }),
        fc.constantFrom('production', 'preview', 'dev'),
        fc.constantFrom('/a', '/a/b/c', '/c', '/', undefined),
        (id, ruleList, env, path) => {
          const rules = new RuleSet(ruleList);
          const early = rules.decideWithoutPath(id, env);
          if (early !== undefined) expect(early.keep).toBe(rules.decide(id, env, path).keep);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
