import { describe, expect, it } from 'vitest';
import { RecentGenerations } from '../../src/cluster/recent-generations.js';

const text = (id: string, note: string): string => JSON.stringify({ id, note });

describe('RecentGenerations', () => {
  it('gives back each record it keeps, byte for byte, and nothing for an id it never saw', () => {
    const recent = new RecentGenerations(100);
    recent.add('gen_a', text('gen_a', 'plain'));
    recent.add('gen_b', text('gen_b', 'naïve café, 日本語 and 🚀'));
    recent.add('gen_c', '');
    expect(recent.get('gen_a')).toBe(text('gen_a', 'plain'));
    expect(recent.get('gen_b')).toBe(text('gen_b', 'naïve café, 日本語 and 🚀'));
    expect(recent.get('gen_c')).toBe('');
    expect(recent.get('gen_d')).toBeUndefined();
  });

  it('keeps every record while its buffer grows many times over', () => {
    const recent = new RecentGenerations(10_000);
    const long = 'x'.repeat(3_000);
    for (let i = 0; i < 1_000; i++) recent.add(`gen_${i}`, text(`gen_${i}`, `${i} ${long}`));
    for (let i = 0; i < 1_000; i++) expect(recent.get(`gen_${i}`)).toBe(text(`gen_${i}`, `${i} ${long}`));
  });

  it('drops the oldest generation whole once the newest is full', () => {
    const recent = new RecentGenerations(3);
    for (let i = 0; i < 7; i++) recent.add(`gen_${i}`, text(`gen_${i}`, String(i)));
    // Generations: [0 1 2] dropped, [3 4 5] previous, [6] current.
    expect([0, 1, 2].map((i) => recent.get(`gen_${i}`))).toEqual([undefined, undefined, undefined]);
    for (const i of [3, 4, 5, 6]) expect(recent.get(`gen_${i}`)).toBe(text(`gen_${i}`, String(i)));
  });

  it('answers a record added again with its newest text', () => {
    const recent = new RecentGenerations(10);
    recent.add('gen_a', text('gen_a', 'first'));
    recent.add('gen_a', text('gen_a', 'second'));
    expect(recent.get('gen_a')).toBe(text('gen_a', 'second'));
  });
});
