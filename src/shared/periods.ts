// Budget periods in UTC: a calendar day, an ISO week (Monday first), a
// calendar month, or all time. A period's id names it in ledgers and files.

export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

const MS_PER_DAY = 86_400_000;

/** `2026-11-23` for the UTC day of `ms`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The id of the period holding `ms`: `day:2026-11-23`, `week:2026-11-23` (its Monday), `month:2026-11`, `total`. */
export function periodId(period: BudgetPeriod, ms: number): string {
  switch (period) {
    case 'day':
      return `day:${dayOf(ms)}`;
    case 'week': {
      const daysSinceMonday = (new Date(ms).getUTCDay() + 6) % 7;
      return `week:${dayOf(ms - daysSinceMonday * MS_PER_DAY)}`;
    }
    case 'month':
      return `month:${dayOf(ms).slice(0, 7)}`;
    case 'total':
      return 'total';
  }
}

/** Ms since epoch when the period holding `ms` ends (the next one starts); undefined for `total`, which never does. */
export function periodEnd(period: BudgetPeriod, ms: number): number | undefined {
  const day = dayStart(dayOf(ms)) ?? ms;
  switch (period) {
    case 'day':
      return day + MS_PER_DAY;
    case 'week':
      return day + (7 - ((new Date(ms).getUTCDay() + 6) % 7)) * MS_PER_DAY;
    case 'month': {
      const date = new Date(ms);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    }
    case 'total':
      return undefined;
  }
}

/** Ms since epoch at the start of a `YYYY-MM-DD` UTC day, or undefined when it is not a real date. */
export function dayStart(day: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(ms) || dayOf(ms) !== day ? undefined : ms;
}

export function addDays(day: string, days: number): string {
  return dayOf((dayStart(day) ?? 0) + days * MS_PER_DAY);
}
