// Numbers and times as the console prints them.
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function time(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function sum(values: Record<string, number>): number {
  return Object.values(values).reduce((a, b) => a + b, 0);
}

export function byReason(values: Record<string, number>): string {
  return Object.entries(values)
    .map(([reason, n]) => `${reason} ${count(n)}`)
    .join(', ');
}

/** USD per token (a decimal string) as USD per million tokens. */
export function perMillion(price: string | undefined): string {
  if (price === undefined) return '';
  return `$${Number((Number(price) * 1_000_000).toPrecision(12))}`;
}

/** A rate as the percentage the form shows and reads back: plain digits (0.0000001, never 1e-7), 15 significant at most. */
export function percentage(rate: number): string {
  return (rate * 100).toLocaleString('en-US', { maximumSignificantDigits: 15, useGrouping: false });
}
