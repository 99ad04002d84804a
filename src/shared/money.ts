// Money in exact integers: one cost unit is 10^-15 USD (a femto-dollar), so
// every catalog price with up to 15 decimal places is an integer number of
// units per token, and sums never drift. Floats appear only at the edges
// (JSON `cost` numbers, Prometheus), converted from the exact decimal text.

/** A cost in units of 10^-15 USD. */
export type Cost = bigint;

export const COST_DECIMALS = 15;
const SCALE = 10n ** BigInt(COST_DECIMALS);
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

export class PriceFormatError extends Error {}

/** "0.000003" -> 3_000_000_000n. Throws for anything but a plain non-negative decimal with at most 15 places. */
export function parseUsd(text: string): Cost {
  const match = DECIMAL.exec(text);
  if (match === null) throw new PriceFormatError('must be a decimal string like "0.000003"');
  const fraction = match[2] ?? '';
  if (fraction.length > COST_DECIMALS) throw new PriceFormatError(`must have at most ${COST_DECIMALS} decimal places`);
  return BigInt(match[1] as string) * SCALE + BigInt(fraction.padEnd(COST_DECIMALS, '0'));
}

/** The exact decimal text of a cost, without trailing zeros: 1_500_000_000n -> "0.0000015". */
export function formatUsd(cost: Cost): string {
  if (cost === 0n) return '0';
  const negative = cost < 0n;
  const magnitude = negative ? -cost : cost;
  const whole = magnitude / SCALE;
  const fraction = (magnitude % SCALE).toString().padStart(COST_DECIMALS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** The nearest double to the exact value (what JSON and Prometheus carry). */
export function costToNumber(cost: Cost): number {
  return Number(formatUsd(cost));
}

/**
 * A budget given in USD as a YAML number (50.1, 0.0001) in units: the
 * decimal it was written as, which is the shortest one that reads back as
 * that double (toFixed(15) would give 50.100000000000001, the double's own
 * value). Exponent forms (1e-7) and digits past the 15th place go through
 * toFixed, rounded to 15 places.
 */
export function usdNumberToCost(usd: number): Cost {
  const shortest = String(usd);
  const fraction = shortest.split('.')[1] ?? '';
  const text = shortest.includes('e') || fraction.length > COST_DECIMALS ? usd.toFixed(COST_DECIMALS) : shortest;
  return parseUsd(text);
}
