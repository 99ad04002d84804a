import { describe, expect, it } from 'vitest';
import { onAbort } from '../../src/shared/abort-callbacks.js';

describe('onAbort', () => {
  it('runs each callback still registered once when its signal aborts, and never again', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    onAbort(controller.signal, () => calls.push('a'));
    const removeB = onAbort(controller.signal, () => calls.push('b'));
    onAbort(controller.signal, () => calls.push('c'));
    removeB();
    removeB();
    expect(calls).toEqual([]);
    controller.abort();
    expect(calls).toEqual(['a', 'c']);
    controller.abort();
    expect(calls).toEqual(['a', 'c']);
  });

  it('skips a callback that an earlier one removed while the signal aborts', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    let removeSecond = (): void => {};
    onAbort(controller.signal, () => {
      calls.push('first');
      removeSecond();
    });
    removeSecond = onAbort(controller.signal, () => calls.push('second'));
    onAbort(controller.signal, () => calls.push('third'));
    controller.abort();
    expect(calls).toEqual(['first', 'third']);
  });

  it('runs a callback at once on a signal that has aborted already', () => {
    const calls: number[] = [];
    const remove = onAbort(AbortSignal.abort(), () => calls.push(1));
    expect(calls).toEqual([1]);
    remove();
  });

  it('keeps signals apart and adds one listener per signal, however many callbacks come and go', () => {
    const first = new AbortController();
    const second = new AbortController();
    let added = 0;
    const original = first.signal.addEventListener.bind(first.signal);
    first.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      added++;
      original(...args);
    }) as AbortSignal['addEventListener'];
    const calls: string[] = [];
    for (let i = 0; i < 100; i++) onAbort(first.signal, () => calls.push('first'))();
    onAbort(first.signal, () => calls.push('first'));
    onAbort(second.signal, () => calls.push('second'));
    expect(added).toBe(1);
    second.abort();
    expect(calls).toEqual(['second']);
    first.abort();
    expect(calls).toEqual(['second', 'first']);
  });
});
