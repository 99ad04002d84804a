#!/usr/bin/env node
// The `sluice` command (package.json's bin, `npm start`). It only sizes
// libuv's thread pool, then loads cli.js: libuv reads UV_THREADPOOL_SIZE once,
// when the pool takes its first job, and Node's ES module loader reads cli.js
// and its imports on that pool, so the size has to be set in a CommonJS file
// before any ES module loads. A size the user set is kept. `node
// dist/src/cli.js` still runs the same daemon, on libuv's default 4 threads.
//
// Why 16 threads rather than libuv's 4: the size was chosen while the pool
// ran as SCHED_BATCH, when a thread woken for a job waited until the event
// loop yielded. libuv wakes an idle thread for each job it queues through one
// glibc condition variable; once every idle thread had been signalled and
// none had run yet, the next signal waited, with the event loop blocked in
// it, until the threads signalled before had run (pthread_cond_signal
// switching its waiter groups). Under the mixed load (bench/RESULTS.md), in
// 3 s windows of five runs each: with 4 threads the loop blocked there
// 222-280 times, up to 9 ms at a time; with 16 a burst of jobs seldom
// outnumbered the idle threads: 0-33 such waits, none over 1 ms. The pool
// now preempts (core/helper-threads.ts); 16 are kept so that a stalled disk,
// holding a thread per queue write or fsync in flight, leaves idle threads
// for the other jobs.
import { readdirSync } from 'node:fs';

const POOL_THREADS = '16';

// Empty counts as unset: libuv would read it as one thread.
process.env['UV_THREADPOOL_SIZE'] ||= POOL_THREADS;

// The threads that exist before the pool starts (the event loop's and V8's
// platform workers): core/helper-threads.ts tells libuv's pool from V8's
// threads by this list, since Node names neither.
if (process.platform === 'linux') {
  try {
    (globalThis as Record<symbol, unknown>)[Symbol.for('sluice.threadsBeforePool')] = readdirSync('/proc/self/task');
  } catch {
    // No list: every helper is treated alike (core/helper-threads.ts).
  }
}
// A SIGHUP left unhandled ends the process, and loading cli.js takes a while
// (a second on a busy machine). One that comes meanwhile is let go: the
// config has not been read yet, so the start reads the file as it is. By the
// time the import settles, cli.js has its own handler in place.
function beforeConfigRead(): void {}
process.on('SIGHUP', beforeConfigRead);
// A module that fails to load rejects unhandled: Node prints where and exits 1.
void import('./cli.js').then(function loaded() {
  process.off('SIGHUP', beforeConfigRead);
});
