import { describe, expect, it } from 'vitest';
import { LinkedSet } from '../../src/shared/linked-set.js';

describe('LinkedSet', () => {
  it('keeps members in insertion order and removes them by their link', () => {
    const set = new LinkedSet<string>();
    const a = set.add('a');
    const b = set.add('b');
    const c = set.add('c');
    expect([...set]).toEqual(['a', 'b', 'c']);
    expect(set.size).toBe(3);

    expect(set.delete(b)).toBe(true);
    expect(set.delete(b)).toBe(false);
    expect([...set]).toEqual(['a', 'c']);
    expect(set.delete(a)).toBe(true);
    expect(set.delete(c)).toBe(true);
    expect([...set]).toEqual([]);
    expect(set.size).toBe(0);

    set.add('d');
    set.add('e');
    expect([...set]).toEqual(['d', 'e']);
    expect(set.shift()).toBe('d');
    expect(set.shift()).toBe('e');
    expect(set.shift()).toBeUndefined();
    expect(set.size).toBe(0);
  });

  it('lets members leave and join while it is iterated', () => {
    const set = new LinkedSet<number>();
    const links = [1, 2, 3, 4].map((n) => set.add(n));
    const seen: number[] = [];
    for (const n of set) {
      seen.push(n);
      if (n === 1) {
        set.delete(links[0] as (typeof links)[number]); // the member being visited
        set.delete(links[2] as (typeof links)[number]); // one not reached yet
      }
      if (n === 2) set.add(5);
    }
    expect(seen).toEqual([1, 2, 4, 5]);
    expect([...set]).toEqual([2, 4, 5]);
    expect(set.size).toBe(3);
  });

  it('forgets a member as soon as it leaves, and everything on clear', () => {
    const set = new LinkedSet<{ name: string }>();
    const link = set.add({ name: 'request' });
    const other = set.add({ name: 'other' });
    set.delete(link);
    expect(link.value).toBeUndefined();
    set.clear();
    expect(other.value).toBeUndefined();
    expect(set.size).toBe(0);
    expect([...set]).toEqual([]);
    expect(set.delete(other)).toBe(false);
  });
});
