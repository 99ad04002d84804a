// Sampling decisions shared through Redis: the instance that decides a trace
// with its root in hand writes `<prefix>decision:<sampler>:<trace id>` with a
// TTL; an instance holding spans whose root it has not seen reads those keys
// while it waits (one MGET per tick for every waiting trace). Writes leave in
// one pipeline per event-loop turn. Everything is also kept by the local
// store, which answers alone while Redis is down.
import type { Logger } from 'pino';
import { errorMessage } from '../../shared/errors.js';
import type { DecisionStore, TraceDecision } from '../decision-store.js';
import { DECISION_TTL_MS, type LocalDecisionStore } from '../local/decision-store.js';
import type { RedisConnection } from './connection.js';

/** Keys per MGET, so one lookup never becomes one huge command. */
const LOOKUP_CHUNK = 1_000;

function encode(decision: TraceDecision): string {
  return `${decision.keep ? 1 : 0}|${decision.rule}`;
}

function decode(value: string): TraceDecision | undefined {
  const bar = value.indexOf('|');
  if (bar !== 1 || (value[0] !== '0' && value[0] !== '1')) return undefined;
  return { keep: value[0] === '1', rule: value.slice(2) };
}

export class RedisDecisionStore implements DecisionStore {
  readonly shared = true;
  readonly #redis: RedisConnection;
  readonly #local: LocalDecisionStore;
  readonly #logger: Logger;
  readonly #keyPrefix: string;
  #writes: Array<[string, string]> = [];
  #flushScheduled = false;

  constructor(redis: RedisConnection, local: LocalDecisionStore, name: string, logger: Logger) {
    this.#redis = redis;
    this.#local = local;
    this.#logger = logger;
    this.#keyPrefix = redis.key('decision', name, '');
  }

  open(): Promise<void> {
    return this.#local.open();
  }

  get(traceId: string): TraceDecision | undefined {
    return this.#local.get(traceId);
  }

  set(traceId: string, decision: TraceDecision, fromRoot: boolean): void {
    this.#local.set(traceId, decision, fromRoot);
    if (!fromRoot || !this.#redis.up) return;
    this.#writes.push([this.#keyPrefix + traceId, encode(decision)]);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => void this.#flush());
    }
  }

  async lookup(traceIds: readonly string[]): Promise<Map<string, TraceDecision>> {
    const found = new Map<string, TraceDecision>();
    if (!this.#redis.up || traceIds.length === 0) return found;
    try {
      for (let at = 0; at < traceIds.length; at += LOOKUP_CHUNK) {
        const chunk = traceIds.slice(at, at + LOOKUP_CHUNK);
        const values = await this.#redis.client.mget(chunk.map((id) => this.#keyPrefix + id));
        values.forEach((value, i) => {
          const decision = value === null ? undefined : decode(value);
          const traceId = chunk[i];
          if (decision !== undefined && traceId !== undefined) found.set(traceId, decision);
        });
      }
    } catch {
      // Unreachable or slow: the waiting spans are decided locally when their wait ends.
    }
    return found;
  }

  async close(): Promise<void> {
    await this.#flush();
    await this.#local.close();
  }

  async #flush(): Promise<void> {
    this.#flushScheduled = false;
    const writes = this.#writes;
    if (writes.length === 0) return;
    this.#writes = [];
    try {
      const pipeline = this.#redis.client.pipeline();
      for (const [key, value] of writes) pipeline.set(key, value, 'PX', DECISION_TTL_MS);
      await pipeline.exec();
    } catch (err) {
      // The other instances decide these traces as having no known path; this one keeps its decisions.
      this.#logger.debug({ err: errorMessage(err), decisions: writes.length }, 'sampling decisions not shared');
    }
  }
}
