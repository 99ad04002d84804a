// How many turns the event loop took while some sliced work ran.

/** Runs `work`, counting the turns of the event loop (setImmediate ticks) taken meanwhile. */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  counting = false;
  return { value, turns };
}
