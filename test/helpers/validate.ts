// What `sluice validate` says of a whole config, for tests of config keys.
import { builtinRegistry } from '../../src/components.js';
import { validateConfig } from '../../src/config/validate.js';
import { ConfigError } from '../../src/shared/errors.js';

/** The problems validation finds in `raw` with the built-in components: [] when it is valid. */
export function validationProblems(raw: unknown): readonly string[] {
  try {
    validateConfig(raw, builtinRegistry());
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}
