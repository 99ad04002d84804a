import { describe, expect, it } from 'vitest';
import { generationIdTime, isGenerationId, newGenerationId } from '../../src/shared/generation-id.js';
import { addDays, dayStart, periodId } from '../../src/shared/periods.js';

describe('generation ids', () => {
  it('are gen_ and a 26-character ULID carrying their time, all distinct', () => {
    const now = Date.UTC(2026, 10, 23, 21, 30);
    const ids = new Set(Array.from({ length: 5000 }, () => newGenerationId(now)));
    expect(ids.size).toBe(5000);
    for (const id of [...ids].slice(0, 50)) {
      expect(id).toMatch(/^gen_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(isGenerationId(id)).toBe(true);
      expect(generationIdTime(id)).toBe(now);
    }
    expect(isGenerationId('gen_short')).toBe(false);
  });
});

describe('budget periods', () => {
  it('name the UTC day, the ISO week by its Monday, the month, and all time', () => {
    const sunday = Date.UTC(2026, 10, 29, 23, 59);
    expect(periodId('day', sunday)).toBe('day:2026-11-29');
    expect(periodId('week', sunday)).toBe('week:2026-11-23');
    expect(periodId('week', Date.UTC(2026, 10, 30))).toBe('week:2026-11-30');
    expect(periodId('month', sunday)).toBe('month:2026-11');
    expect(periodId('total', sunday)).toBe('total');
  });

  it('reads only real dates', () => {
    expect(dayStart('2026-02-30')).toBeUndefined();
    expect(dayStart('2026-1-01')).toBeUndefined();
    expect(dayStart('2026-03-01')).toBe(Date.UTC(2026, 2, 1));
    expect(addDays('2026-02-28', 1)).toBe('2026-03-01');
  });
});
