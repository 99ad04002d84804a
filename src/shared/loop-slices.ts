// Synchronous batch work cut into slices of a few tenths of a millisecond,
// with a turn of the event loop between them, so requests are served in
// between (issue 10: the loop is never held by batch work for long).
//
// Every sliced task also shares one budget per turn of the loop: several
// requests handled in one poll phase each start batch work (a file line's
// JSON, a delivery's gzip), and each task's own slice would let them run
// back to back, one slice apiece, holding the loop for all of them. Once the
// turn's budget is spent, a task yields before its next piece, and a new
// task before its first.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Batch work all sliced tasks together may do in one turn of the event loop. */
export const TURN_BUDGET_MS = 0.5;

let turnBudgetEnds: number | undefined;

function resetTurnBudget(): void {
  turnBudgetEnds = undefined;
}

/**
 * Whether this turn's shared budget is spent. The first check in a turn
 * opens the budget and queues its reset for the loop's check phase, which
 * runs before any task's own turn queued after it.
 */
function turnBudgetSpent(now: number): boolean {
  if (turnBudgetEnds === undefined) {
    turnBudgetEnds = now + TURN_BUDGET_MS;
    setImmediate(resetTurnBudget);
  }
  return now >= turnBudgetEnds;
}

export class LoopSlices {
  readonly #sliceMs: number;
  #deadline: number;

  private constructor(sliceMs: number) {
    this.#sliceMs = sliceMs;
    this.#deadline = performance.now() + sliceMs;
  }

  /** The slices of a new task: after a turn of the loop first when this turn's budget is spent. */
  static async start(sliceMs: number): Promise<LoopSlices> {
    const slices = new LoopSlices(sliceMs);
    if (turnBudgetSpent(performance.now())) await slices.turn();
    return slices;
  }

  /** Whether the current slice's time, or this turn's budget, is used up: checked between two pieces of work, without a promise. */
  get due(): boolean {
    const now = performance.now();
    return now >= this.#deadline || turnBudgetSpent(now);
  }

  /** Runs `work` on `bytes` in pieces of `pieceBytes`, taking a turn of the loop after any piece that leaves a turn due. */
  async eachPiece(bytes: Uint8Array, pieceBytes: number, work: (piece: Uint8Array) => void): Promise<void> {
    for (let from = 0; from < bytes.byteLength; from += pieceBytes) {
      work(bytes.subarray(from, from + pieceBytes));
      if (this.due) await this.turn();
    }
  }

  /** A turn of the event loop, then a new slice. */
  async turn(): Promise<void> {
    await nextTurn();
    this.#deadline = performance.now() + this.#sliceMs;
  }
}
