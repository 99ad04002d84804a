import { describe, expect, it } from 'vitest';
import { ShutdownDeadline } from '../../src/core/shutdown-deadline.js';

describe('ShutdownDeadline', () => {
  it('has no remaining time to offer before a stop begins', () => {
    expect(new ShutdownDeadline().remainingMs()).toBeUndefined();
  });

  it('offers what is left of the grace once a stop began, never less than 0', () => {
    const deadline = new ShutdownDeadline();
    deadline.begin(60_000);
    const left = deadline.remainingMs();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(60_000);
    const over = new ShutdownDeadline();
    over.begin(0);
    expect(over.remainingMs()).toBe(0);
  });

  it('keeps the first deadline when a stop begins again', () => {
    const deadline = new ShutdownDeadline();
    deadline.begin(0);
    deadline.begin(60_000);
    expect(deadline.remainingMs()).toBe(0);
  });
});
