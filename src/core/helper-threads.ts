// The daemon's helper threads (libuv's pool: file writes, fsyncs, socket
// lookups; V8's platform workers: concurrent marking, compilation) share the
// core with the event loop. Woken, a helper preempts the loop at once: under
// the mixed load (bench/RESULTS.md) the loop was preempted about 1,500 times
// a second and waited 8.6% of the time for its own helpers, sometimes more
// than 2 ms at a stretch, in the middle of a request. As SCHED_BATCH a
// helper keeps its share of the CPU (same nice value, same weight) but no
// longer preempts on wake-up: it runs when the loop waits for I/O or its
// time slice ends.
//
// V8's workers run long stretches of CPU work, so they become SCHED_BATCH.
// libuv's pool is left to preempt: its jobs are short system calls since
// delivery bodies are compressed on the loop (exporters/otlphttp/
// gzip-sliced.ts), and the queue's durable writes, on which every OTLP
// acknowledgement waits, would otherwise wait twice (to start, to finish)
// for the loop to yield or the kernel's next tick. Node names neither kind
// of thread: the sluice command (sluice.cts) lists the threads that exist
// before the pool starts, and those are V8's. Without that list (cli.js run
// directly), or when the threads started since are not exactly the pool's
// size (a preload started the pool first), every helper becomes SCHED_BATCH.
//
// Linux only. Node has no API for a thread's scheduling policy, so this runs
// util-linux's `chrt` once per thread, after start-up, when every helper
// exists (threads started later by the event loop's thread inherit its
// policy, SCHED_OTHER, and are left alone). SLUICE_HELPER_THREADS=default
// leaves every thread as it is.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { errorMessage } from '../shared/errors.js';

const run = promisify(execFile);
const CHRT_TIMEOUT_MS = 5_000;

type HelperThreadsOutcome =
  | { readonly kind: 'batched'; readonly threads: number; readonly preempting: number; readonly unsure?: string | undefined }
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'failed'; readonly error: string };

/** The threads the sluice command found before libuv's pool started (see the top of this file). */
function threadsBeforePool(): ReadonlySet<string> | undefined {
  const listed = (globalThis as Record<symbol, unknown>)[Symbol.for('sluice.threadsBeforePool')];
  return Array.isArray(listed) ? new Set(listed.map(String)) : undefined;
}

interface ThreadSelection {
  /** The threads to move to SCHED_BATCH. */
  readonly batch: string[];
  /** libuv's pool, left as it is. */
  readonly preempting: number;
  /** Why the pool could not be told apart, when it could not. */
  readonly unsure?: string;
}

/** The threads to move: V8's workers, or every helper when the pool cannot be told apart. */
async function helperThreadIds(): Promise<ThreadSelection> {
  const own = String(process.pid);
  const beforePool = threadsBeforePool();
  const helpers = (await readdir('/proc/self/task')).filter((tid) => tid !== own);
  if (beforePool === undefined) return { batch: helpers, preempting: 0 };
  const v8 = helpers.filter((tid) => beforePool.has(tid));
  const later = helpers.length - v8.length;
  const poolSize = libuvPoolSize(process.env.UV_THREADPOOL_SIZE);
  // A preload (--import, --require, a loader) may have started the pool before
  // the list was made, or something else may have started threads since: the
  // list then no longer tells the pool apart, and every helper is batched.
  if (later !== poolSize) {
    return { batch: helpers, preempting: 0, unsure: `${later} threads started after the sluice command's list where libuv's pool of ${poolSize} was expected` };
  }
  return { batch: v8, preempting: later };
}

/** The size libuv gives its pool for this UV_THREADPOOL_SIZE: 4 unset, at least 1, at most 1024. */
export function libuvPoolSize(value: string | undefined): number {
  if (value === undefined) return 4;
  const parsed = Number.parseInt(value, 10); // libuv reads it with atoi
  if (!Number.isFinite(parsed) || parsed <= 0) return 1;
  return Math.min(parsed, 1024);
}

/** Moves the helper threads to SCHED_BATCH (see the top of this file). Never throws. */
async function batchHelperThreads(): Promise<HelperThreadsOutcome> {
  if (process.platform !== 'linux') return { kind: 'skipped', reason: `not on Linux (${process.platform})` };
  if (process.env.SLUICE_HELPER_THREADS === 'default') return { kind: 'skipped', reason: 'SLUICE_HELPER_THREADS=default' };
  let selection: ThreadSelection;
  try {
    // libuv starts its pool on first use: a file-system call makes sure it exists.
    await stat('/proc/self');
    selection = await helperThreadIds();
  } catch (err) {
    return { kind: 'failed', error: errorMessage(err) };
  }
  let batched = 0;
  let firstError: string | undefined;
  const tids = selection.batch;
  for (const tid of tids) {
    try {
      await run('chrt', ['--batch', '--pid', '0', tid], { timeout: CHRT_TIMEOUT_MS });
      batched += 1;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'failed', error: 'chrt (util-linux) is not installed' };
      // A thread that ended since the listing is no failure; anything else is kept for the log.
      if (!existsSync(`/proc/self/task/${tid}`)) continue;
      firstError ??= ((err as { stderr?: string }).stderr ?? '').trim() || errorMessage(err);
    }
  }
  if (firstError !== undefined) return { kind: 'failed', error: `${batched} of ${tids.length} threads moved; chrt: ${firstError}` };
  return { kind: 'batched', threads: batched, preempting: selection.preempting, unsure: selection.unsure };
}

/** batchHelperThreads, its outcome logged. */
export async function batchHelperThreadsLogged(logger: Logger): Promise<void> {
  const outcome = await batchHelperThreads();
  if (outcome.kind === 'batched') {
    // poolThreads: libuv's, left to preempt the loop; poolUnknown: why the pool was batched too.
    const fields = outcome.unsure === undefined ? {} : { poolUnknown: outcome.unsure };
    logger.info({ threads: outcome.threads, poolThreads: outcome.preempting, ...fields }, 'helper threads run as SCHED_BATCH: they no longer preempt the event loop');
  } else if (outcome.kind === 'skipped') {
    logger.debug({ reason: outcome.reason }, 'helper threads keep their scheduling policy');
  } else {
    logger.info({ err: outcome.error }, 'helper threads keep their scheduling policy: moving them to SCHED_BATCH failed');
  }
}
