// Sampling decisions per trace, per sampler (each drain has its own). The
// local store remembers them in memory and, for decisions made with the
// trace's root in hand, on disk, so spans replayed after a restart follow
// their trace. The Redis store also shares root decisions with the other
// instances, which look them up for spans whose root they never see.

export interface TraceDecision {
  readonly keep: boolean;
  /** The rule that decided, for the kept/dropped counters. */
  readonly rule: string;
}

export interface DecisionStore {
  /** True when lookup() can find decisions made elsewhere. */
  readonly shared: boolean;
  /** Loads what survived the last run. */
  open(): Promise<void>;
  get(traceId: string): TraceDecision | undefined;
  /** `fromRoot`: decided with the trace's root (path known): kept durably and shared. */
  set(traceId: string, decision: TraceDecision, fromRoot: boolean): void;
  /** Decisions other instances recorded for these traces; never rejects (empty when unreachable). */
  lookup(traceIds: readonly string[]): Promise<Map<string, TraceDecision>>;
  /** Flushes what is buffered. Idempotent. */
  close(): Promise<void>;
}
