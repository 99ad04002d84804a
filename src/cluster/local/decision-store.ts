// Decisions in memory (bounded by entries and age), and, for decisions made
// with the trace's root in hand, in a small log next to the drain's queues:
// after a restart, spans replayed from the pending queue (or sent late by a
// client) follow the decision their root made, not "no known path". The log
// is written at most once a second and on close, so a kill -9 loses at most
// the last second of decisions; it is rotated in two generations.
import { open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { appendWhole } from '../../shared/append-whole.js';
import { errorMessage } from '../../shared/errors.js';
import type { DecisionStore, TraceDecision } from '../decision-store.js';
import { writeAtomically } from './drain-store.js';

export const DECISION_ENTRIES = 200_000;
export const DECISION_TTL_MS = 10 * 60_000;
const FLUSH_INTERVAL_MS = 1_000;
const LOG_FILE = 'decisions.log';
const OLD_LOG_FILE = 'decisions.old.log';
/** Lines per log generation before it is rotated. */
const LINES_PER_GENERATION = 100_000;

interface Entry {
  readonly decision: TraceDecision;
  readonly expiresAtMs: number;
}

interface LogLine {
  readonly t: string;
  readonly k: 0 | 1;
  readonly r: string;
  /** expiry, ms since the epoch */
  readonly x: number;
}

export interface LocalDecisionStoreOptions {
  /** Where the log lives; undefined keeps decisions in memory only (sampling processors). */
  readonly directory?: string | undefined;
  readonly logger?: Logger | undefined;
  readonly now?: () => number;
  readonly maxEntries?: number;
  readonly ttlMs?: number;
}

export class LocalDecisionStore implements DecisionStore {
  readonly shared = false;
  readonly #entries = new Map<string, Entry>();
  readonly #options: LocalDecisionStoreOptions;
  readonly #now: () => number;
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  #buffered: string[] = [];
  #linesInGeneration = 0;
  #log: FileHandle | undefined;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: LocalDecisionStoreOptions = {}) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#maxEntries = options.maxEntries ?? DECISION_ENTRIES;
    this.#ttlMs = options.ttlMs ?? DECISION_TTL_MS;
  }

  async open(): Promise<void> {
    const directory = this.#options.directory;
    if (directory === undefined || this.#log !== undefined) return;
    const now = this.#now();
    const live: string[] = [];
    let newestLines = 0;
    for (const file of [OLD_LOG_FILE, LOG_FILE]) {
      const lines = await readLines(join(directory, file));
      if (file === LOG_FILE) newestLines = lines.length;
      for (const line of lines) {
        if (line.x <= now) continue;
        this.#remember(line.t, { keep: line.k === 1, rule: line.r }, line.x);
        live.push(JSON.stringify(line));
      }
    }
    // Compact: what is still live becomes the old generation, the new one starts empty.
    try {
      await writeAtomically(join(directory, OLD_LOG_FILE), live.length === 0 ? '' : `${live.join('\n')}\n`);
      this.#log = await open(join(directory, LOG_FILE), 'w', 0o600);
    } catch (err) {
      // On a full disk the drain must still start, to deliver its queue and
      // free the space: both generations stay as they are, new lines go after them.
      this.#options.logger?.warn({ err: errorMessage(err) }, 'sampling decisions could not be compacted; appending to the log as it is');
      this.#log = await open(join(directory, LOG_FILE), 'a', 0o600);
      this.#linesInGeneration = newestLines;
    }
    this.#timer = setInterval(() => void this.#flush(), FLUSH_INTERVAL_MS);
    this.#timer.unref();
  }

  get(traceId: string): TraceDecision | undefined {
    const entry = this.#entries.get(traceId);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.#now()) {
      this.#entries.delete(traceId);
      return undefined;
    }
    return entry.decision;
  }

  set(traceId: string, decision: TraceDecision, fromRoot: boolean): void {
    const expiresAtMs = this.#now() + this.#ttlMs;
    this.#remember(traceId, decision, expiresAtMs);
    if (fromRoot && this.#log !== undefined && !this.#closed) {
      const line: LogLine = { t: traceId, k: decision.keep ? 1 : 0, r: decision.rule, x: expiresAtMs };
      this.#buffered.push(JSON.stringify(line));
    }
  }

  async lookup(): Promise<Map<string, TraceDecision>> {
    return new Map();
  }

  /** Writes what is buffered; a memory-only store keeps answering (LocalState hands it to the next graph after a reload). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#flush();
    await this.#flushing;
    await this.#log?.close();
    this.#log = undefined;
  }

  get size(): number {
    return this.#entries.size;
  }

  #remember(traceId: string, decision: TraceDecision, expiresAtMs: number): void {
    this.#entries.delete(traceId);
    this.#entries.set(traceId, { decision, expiresAtMs });
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }

  #flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write()).catch((err: unknown) => {
      this.#options.logger?.error({ err: errorMessage(err) }, 'sampling decisions could not be written; they hold in memory');
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const directory = this.#options.directory;
    if (this.#buffered.length === 0 || this.#log === undefined || directory === undefined) return;
    const lines = this.#buffered;
    this.#buffered = [];
    try {
      await appendWhole(this.#log, [Buffer.from(`${lines.join('\n')}\n`)], true);
    } catch (err) {
      // Tried again at the next flush (a disk with room again), first and in order; no more than the store holds.
      this.#buffered = [...lines, ...this.#buffered].slice(-this.#maxEntries);
      throw err;
    }
    this.#linesInGeneration += lines.length;
    if (this.#linesInGeneration >= LINES_PER_GENERATION) {
      await this.#log.close();
      await rename(join(directory, LOG_FILE), join(directory, OLD_LOG_FILE));
      this.#log = await open(join(directory, LOG_FILE), 'a', 0o600);
      this.#linesInGeneration = 0;
    }
  }
}

async function readLines(path: string): Promise<LogLine[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  const lines: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    try {
      const line = JSON.parse(raw) as Partial<LogLine>;
      // A torn last line (crash mid-write) is skipped, like a torn queue tail.
      if (typeof line.t === 'string' && (line.k === 0 || line.k === 1) && typeof line.r === 'string' && typeof line.x === 'number') lines.push(line as LogLine);
    } catch {
      continue;
    }
  }
  return lines;
}
