// The sampling engine shared by `sampling/*` processors and every drain. It
// works on the wire index: trace ids and resources are read from the scan,
// only a trace's root span (or, after a wait, its first SERVER span) is
// decoded, and only when the path can change the decision.
//
// sample() splits a batch into spans decided now (kept) and spans that wait
// for their root (pending). hold() takes such pending spans back and settles
// once every trace in them is decided: by a later batch carrying the root,
// or, past decision_wait or max_pending_spans, as a trace with no known path
// (the first SERVER span seen supplies the path when there is one).
//
// Decisions live in a DecisionStore. With a shared one (cluster mode), every
// tick also asks it for the traces still waiting: another instance that saw
// their root may have decided them, and they go out (or not) the same way.
import type { DecisionStore } from '../../cluster/decision-store.js';
import { LocalDecisionStore } from '../../cluster/local/decision-store.js';
import type { Telemetry } from '../../shared/telemetry.js';
import { SpanKind } from '../../otlp/model.js';
import { filterSpans, scanRequest, type SpanTable, type WireIndex } from '../../otlp/wire.js';
import { RuleTally, samplingMetrics, type SamplingMetrics } from './metrics.js';
import { NO_RULES_CONFIGURED, RuleSet, type Decision, type SamplingRule } from './rules.js';
import { pathOfSpan, ResourceInfoCache, type ResourceInfo } from './trace-context.js';

export interface SamplerOptions {
  /** The `sampler` label of the counters: a processor id or `drain/<id>`. */
  readonly name: string;
  readonly rules: readonly SamplingRule[];
  readonly decisionWaitMs: number;
  readonly maxPendingSpans: number;
  /** Drop spans whose resource has platform.runtime = edge (drains do). */
  readonly excludeEdge: boolean;
  readonly telemetry: Telemetry;
  /** Default: decisions in memory only. The caller opens and closes a store it passes. */
  readonly decisions?: DecisionStore;
  readonly now?: () => number;
}

export interface SpanSet {
  readonly buf: Uint8Array;
  readonly spanCount: number;
}

export interface SampleResult {
  readonly kept: SpanSet | undefined;
  /** Spans of traces not decided yet: hand them to hold() (after persisting them, for drains). */
  readonly pending: SpanSet | undefined;
  readonly edgeSpans: number;
  readonly sampledOutSpans: number;
}

export interface HoldResult {
  readonly kept: SpanSet | undefined;
  readonly sampledOutSpans: number;
}

export class SamplerStoppedError extends Error {
  readonly code = 'SLUICE_ERR_SAMPLER_STOPPED';
}

interface TraceGroup {
  readonly traceId: Uint8Array;
  /** The environment of the first span's resource, or the root's once seen. */
  environment: string | undefined;
  /** The root span's Span message, once seen. */
  root: Uint8Array | undefined;
  decision: Decision | undefined;
}

interface PendingHold {
  readonly index: WireIndex;
  readonly decisions: Map<string, Decision>;
  undecided: number;
  readonly resolve: (result: HoldResult) => void;
  readonly reject: (err: unknown) => void;
}

interface WaitingTrace {
  readonly traceId: Uint8Array;
  /** The first environment a held span's resource names (another service's may name none). */
  environment: string | undefined;
  /** The path of the first SERVER span held, decoded when it arrives. */
  serverPath: string | undefined;
  sawServer: boolean;
  spans: number;
  readonly sinceMs: number;
  readonly holds: Set<PendingHold>;
}

const VERDICT_DROP = 0;
const VERDICT_KEEP = 1;
const VERDICT_PENDING = 2;
const VERDICT_EDGE = 3;
const MAX_TICK_MS = 100;
/** Waiting traces asked of a shared store per tick, oldest first. */
const MAX_LOOKUP_TRACES = 10_000;

export class Sampler {
  readonly #name: string;
  #rules: RuleSet;
  readonly #decisionWaitMs: number;
  readonly #maxPendingSpans: number;
  readonly #excludeEdge: boolean;
  readonly #now: () => number;
  readonly #metrics: SamplingMetrics;
  readonly #resources = new ResourceInfoCache();
  readonly #decisions: DecisionStore;
  #lookingUp = false;
  /** Insertion order is arrival order, so the oldest waiting trace is first. */
  readonly #waiting = new Map<string, WaitingTrace>();
  #pendingSpans = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: SamplerOptions) {
    this.#name = options.name;
    this.#rules = new RuleSet(options.rules);
    this.#decisionWaitMs = options.decisionWaitMs;
    this.#maxPendingSpans = options.maxPendingSpans;
    this.#excludeEdge = options.excludeEdge;
    this.#now = options.now ?? Date.now;
    this.#metrics = samplingMetrics(options.telemetry);
    this.#decisions = options.decisions ?? new LocalDecisionStore({ now: this.#now });
  }

  /** Spans waiting for a decision right now. */
  get pendingSpans(): number {
    return this.#pendingSpans;
  }

  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    const tickMs = Math.max(1, Math.min(MAX_TICK_MS, this.#decisionWaitMs));
    this.#timer = setInterval(() => this.#tick(), tickMs);
    this.#timer.unref();
  }

  /**
   * Runs new rules from now on. Traces already decided keep their decision;
   * traces still waiting for their root stay waiting and are decided by the
   * new rules, as if they had arrived after the change.
   */
  setRules(rules: readonly SamplingRule[]): void {
    this.#rules = new RuleSet(rules);
    // No rules keep everything: nothing is left to wait for.
    if (this.#rules.empty) this.flush();
  }

  /** Decides every waiting trace now, as if its wait had expired. */
  flush(): void {
    for (const [key, waiting] of [...this.#waiting]) this.#expire(key, waiting);
  }

  /** Stops the timer; holds still waiting reject with SamplerStoppedError (drains keep them on disk). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    const holds = new Set<PendingHold>();
    for (const waiting of this.#waiting.values()) for (const hold of waiting.holds) holds.add(hold);
    this.#waiting.clear();
    this.#pendingSpans = 0;
    this.#metrics.pending.set({ sampler: this.#name }, 0);
    for (const hold of holds) hold.reject(new SamplerStoppedError(`sampler ${this.#name} stopped`));
  }

  sample(index: WireIndex): SampleResult {
    // No rules keep every trace: nothing to group, look up or remember (edge spans aside).
    if (this.#rules.empty && !this.#excludeEdge) return this.#keepAll(index);
    const infos = index.resourceSpans.map((rs) => this.#resources.get(rs.resource === undefined ? undefined : index.buf.subarray(rs.resource[0], rs.resource[1])));
    if (this.#rules.empty && !infos.some((info) => info.edge)) return this.#keepAll(index);
    const groups = this.#group(index, infos);
    for (const [key, group] of groups) this.#decideGroup(key, group);

    const verdicts = new Uint8Array(index.spanCount);
    let ordinal = 0;
    const tally = new RuleTally();
    let edgeSpans = 0;
    let sampledOutSpans = 0;
    let pendingSpans = 0;
    index.resourceSpans.forEach((rs, resourceIndex) => {
      const edge = this.#excludeEdge && infos[resourceIndex]?.edge === true;
      for (const ss of rs.scopeSpans) {
        const spans = ss.spans;
        for (let i = 0; i < spans.length; i++, ordinal++) {
          const decision = groups.get(spans.traceKey(i))?.decision;
          let verdict: number;
          if (edge) verdict = VERDICT_EDGE;
          else if (decision === undefined) verdict = VERDICT_PENDING;
          else verdict = decision.keep ? VERDICT_KEEP : VERDICT_DROP;
          verdicts[ordinal] = verdict;
          if (verdict === VERDICT_EDGE) edgeSpans++;
          else if (verdict === VERDICT_PENDING) pendingSpans++;
          else if (decision !== undefined) {
            tally.add(decision.rule, decision.keep);
            if (!decision.keep) sampledOutSpans++;
          }
        }
      }
    });
    tally.flush(this.#metrics, this.#name);
    const kept = filterSpans(index, (_spans, _i, _resourceIndex, n) => verdicts[n] === VERDICT_KEEP);
    const pending = pendingSpans === 0 ? undefined : filterSpans(index, (_spans, _i, _resourceIndex, n) => verdicts[n] === VERDICT_PENDING);
    return { kept, pending, edgeSpans, sampledOutSpans };
  }

  #keepAll(index: WireIndex): SampleResult {
    const spans = index.spanCount;
    if (spans > 0) this.#metrics.kept.inc({ sampler: this.#name, rule: NO_RULES_CONFIGURED }, spans);
    return { kept: spans === 0 ? undefined : { buf: index.buf, spanCount: spans }, pending: undefined, edgeSpans: 0, sampledOutSpans: 0 };
  }

  /**
   * Waits until every trace of these (pending) spans is decided, then
   * settles with the kept ones. Accepts spans from sample() or replayed from disk.
   */
  hold(pending: Uint8Array | WireIndex): Promise<HoldResult> {
    if (this.#stopped) return Promise.reject(new SamplerStoppedError(`sampler ${this.#name} stopped`));
    // Replayed records were checked when received (by this version or an older one): their framing is enough.
    const index = pending instanceof Uint8Array ? scanRequest(pending, false) : pending;
    return new Promise<HoldResult>((resolve, reject) => {
      const hold: PendingHold = { index, decisions: new Map(), undecided: 0, resolve, reject };
      index.resourceSpans.forEach((rs, resourceIndex) => {
        const info = this.#resources.get(rs.resource === undefined ? undefined : index.buf.subarray(rs.resource[0], rs.resource[1]));
        for (const ss of rs.scopeSpans) for (let i = 0; i < ss.spans.length; i++) this.#attach(hold, ss.spans, i, info);
      });
      if (hold.undecided === 0) this.#finish(hold);
      else this.#enforceSpanBound();
    });
  }

  #tick(): void {
    if (!this.#decisions.shared || this.#waiting.size === 0) return this.expireDue();
    // One lookup at a time; expiry waits for it, so a decision found late still wins.
    if (this.#lookingUp) return;
    this.#lookingUp = true;
    const keys: string[] = [];
    for (const key of this.#waiting.keys()) {
      keys.push(key);
      if (keys.length >= MAX_LOOKUP_TRACES) break;
    }
    void this.#decisions
      .lookup(keys)
      .then((found) => {
        if (this.#stopped) return;
        for (const [key, decision] of found) if (this.#waiting.has(key)) this.#decide(key, decision, false);
      })
      .finally(() => {
        this.#lookingUp = false;
        if (!this.#stopped) this.expireDue();
      });
  }

  /** Expires traces whose wait is over (the timer calls this; tests may too). */
  expireDue(): void {
    const deadline = this.#now() - this.#decisionWaitMs;
    for (const [key, waiting] of this.#waiting) {
      if (waiting.sinceMs > deadline) break;
      this.#expire(key, waiting);
    }
  }

  #group(index: WireIndex, infos: readonly ResourceInfo[]): Map<string, TraceGroup> {
    const groups = new Map<string, TraceGroup>();
    index.resourceSpans.forEach(function groupResource(rs, resourceIndex) {
      const info = infos[resourceIndex];
      for (const ss of rs.scopeSpans) {
        const spans = ss.spans;
        for (let i = 0; i < spans.length; i++) {
          const key = spans.traceKey(i);
          let group = groups.get(key);
          if (group === undefined) {
            group = { traceId: spans.traceId(i), environment: info?.environment, root: undefined, decision: undefined };
            groups.set(key, group);
          }
          if (group.root === undefined && spans.isRoot(i)) {
            group.root = spans.content(i);
            group.environment = info?.environment;
          }
        }
      }
    });
    return groups;
  }

  #decideGroup(key: string, group: TraceGroup): void {
    const root = group.root;
    const cached = this.#decisions.get(key);
    if (cached !== undefined) {
      group.decision = cached;
      // Children often arrive first and may decide at once; the root still records the decision
      // (durably, and shared), as below, for later spans that cannot decide by themselves.
      if (root !== undefined) this.#decisions.set(key, cached, true);
      return;
    }
    // Without the root, the environment is a child's resource's: it decides at once only when it
    // names an environment with rules (a child without one, or of another service, must not drop a
    // trace its root would keep); otherwise the spans wait for the root.
    const early = root !== undefined || this.#rules.hasRulesFor(group.environment);
    let decision = early ? this.#rules.decideWithoutPath(group.traceId, group.environment) : undefined;
    if (decision === undefined && root !== undefined) decision = this.#rules.decide(group.traceId, group.environment, pathOfSpan(root));
    // A decision made with the root is kept across restarts and shared with other instances, whether
    // or not its path mattered: a later span of another service (no environment, or one without
    // rules) cannot decide by itself, and must follow the root (DESIGN 13).
    const fromRoot = root !== undefined;
    if (decision === undefined) return;
    group.decision = decision;
    this.#decide(key, decision, fromRoot);
  }

  #attach(hold: PendingHold, spans: SpanTable, i: number, info: ResourceInfo): void {
    const key = spans.traceKey(i);
    if (hold.decisions.has(key)) return;
    const cached = this.#decisions.get(key);
    if (cached !== undefined) {
      hold.decisions.set(key, cached);
      return;
    }
    let waiting = this.#waiting.get(key);
    if (waiting === undefined) {
      waiting = { traceId: Uint8Array.from(spans.traceId(i)), environment: info.environment, serverPath: undefined, sawServer: false, spans: 0, sinceMs: this.#now(), holds: new Set() };
      this.#waiting.set(key, waiting);
    }
    waiting.environment ??= info.environment;
    if (!waiting.sawServer && spans.kind(i) === SpanKind.SERVER) {
      waiting.sawServer = true;
      waiting.serverPath = pathOfSpan(spans.content(i));
    }
    waiting.spans++;
    this.#pendingSpans++;
    if (!waiting.holds.has(hold)) {
      waiting.holds.add(hold);
      hold.undecided++;
    }
    this.#metrics.pending.set({ sampler: this.#name }, this.#pendingSpans);
  }

  #enforceSpanBound(): void {
    for (const [key, waiting] of this.#waiting) {
      if (this.#pendingSpans <= this.#maxPendingSpans) break;
      this.#expire(key, waiting);
    }
  }

  #expire(key: string, waiting: WaitingTrace): void {
    this.#decide(key, this.#rules.decide(waiting.traceId, waiting.environment, waiting.serverPath), false);
  }

  /** Records a trace's decision and settles whatever waited for it. */
  #decide(key: string, decision: Decision, fromRoot: boolean): void {
    this.#decisions.set(key, decision, fromRoot);
    const waiting = this.#waiting.get(key);
    if (waiting === undefined) return;
    this.#waiting.delete(key);
    this.#pendingSpans -= waiting.spans;
    this.#metrics.pending.set({ sampler: this.#name }, this.#pendingSpans);
    for (const hold of waiting.holds) {
      hold.decisions.set(key, decision);
      hold.undecided--;
      if (hold.undecided === 0) this.#finish(hold);
    }
  }

  #finish(hold: PendingHold): void {
    const tally = new RuleTally();
    let sampledOutSpans = 0;
    const kept = filterSpans(hold.index, function keepDecided(spans, i) {
      const decision = hold.decisions.get(spans.traceKey(i));
      if (decision === undefined) return false;
      tally.add(decision.rule, decision.keep);
      if (!decision.keep) sampledOutSpans++;
      return decision.keep;
    });
    tally.flush(this.#metrics, this.#name);
    hold.resolve({ kept, sampledOutSpans });
  }
}
