// The daemon's helper threads (libuv's pool: file writes, fsyncs, gzip; V8's
// platform workers: concurrent marking, compilation) share the core with the
// event loop. Woken, a helper preempts the loop at once: under the mixed load
// (bench/RESULTS.md) the loop was preempted about 1,500 times a second and
// waited 8.6% of the time for its own helpers, sometimes more than 2 ms at a
// stretch, in the middle of a request. As SCHED_BATCH a helper keeps its
// share of the CPU (same nice value, same weight) but no longer preempts on
// wake-up: it runs when the loop waits for I/O or its time slice ends.
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
  | { readonly kind: 'batched'; readonly threads: number }
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'failed'; readonly error: string };

/** Every thread of this process but the one running the event loop. */
async function helperThreadIds(): Promise<string[]> {
  const own = String(process.pid);
  return (await readdir('/proc/self/task')).filter((tid) => tid !== own);
}

/** Moves the helper threads to SCHED_BATCH (see the top of this file). Never throws. */
async function batchHelperThreads(): Promise<HelperThreadsOutcome> {
  if (process.platform !== 'linux') return { kind: 'skipped', reason: `not on Linux (${process.platform})` };
  if (process.env.SLUICE_HELPER_THREADS === 'default') return { kind: 'skipped', reason: 'SLUICE_HELPER_THREADS=default' };
  let tids: string[];
  try {
    // libuv starts its pool on first use: a file-system call makes sure it exists.
    await stat('/proc/self');
    tids = await helperThreadIds();
  } catch (err) {
    return { kind: 'failed', error: errorMessage(err) };
  }
  let batched = 0;
  let firstError: string | undefined;
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
  return { kind: 'batched', threads: batched };
}

/** batchHelperThreads, its outcome logged. */
export async function batchHelperThreadsLogged(logger: Logger): Promise<void> {
  const outcome = await batchHelperThreads();
  if (outcome.kind === 'batched') logger.info({ threads: outcome.threads }, 'helper threads run as SCHED_BATCH: they no longer preempt the event loop');
  else if (outcome.kind === 'skipped') logger.debug({ reason: outcome.reason }, 'helper threads keep their scheduling policy');
  else logger.info({ err: outcome.error }, 'helper threads keep their scheduling policy: moving them to SCHED_BATCH failed');
}
