// Sliced batch work shares one budget per turn of the event loop: a task
// started once another has used this turn's budget waits for a turn first.
import { describe, expect, it } from 'vitest';
import { LoopSlices } from '../../src/shared/loop-slices.js';

/** Works (spins) until the slices say a turn is due; returns how many pieces that took. */
function workUntilDue(slices: LoopSlices): number {
  let pieces = 0;
  do pieces++;
  while (!slices.due);
  return pieces;
}

describe('LoopSlices', () => {
  it('lets a task started after this turn\'s budget is spent begin only after a turn of the loop', async () => {
    const events: string[] = [];
    const first = await LoopSlices.start(60_000);
    // Its own slice is a minute: what makes it due is the turn's shared budget.
    workUntilDue(first);
    setImmediate(() => events.push('turn'));
    const second = LoopSlices.start(60_000).then(() => events.push('second starts'));
    await second;
    expect(events).toEqual(['turn', 'second starts']);
  });

  it('gives a task its own budget again after a turn', async () => {
    const slices = await LoopSlices.start(60_000);
    workUntilDue(slices);
    await slices.turn();
    expect(slices.due).toBe(false);
  });

  it('starts at once while this turn has budget left', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    const events: string[] = [];
    setImmediate(() => events.push('turn'));
    await LoopSlices.start(60_000);
    events.push('starts');
    expect(events).toEqual(['starts']);
  });
});
