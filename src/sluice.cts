#!/usr/bin/env node
// The `sluice` command (package.json's bin, `npm start`). It only sizes
// libuv's thread pool, then loads cli.js: libuv reads UV_THREADPOOL_SIZE once,
// when the pool takes its first job, and Node's ES module loader reads cli.js
// and its imports on that pool, so the size has to be set in a CommonJS file
// before any ES module loads. A size the user set is kept. `node
// dist/src/cli.js` still runs the same daemon, on libuv's default 4 threads.
//
// Why 16 threads rather than libuv's 4: they run as SCHED_BATCH
// (core/helper-threads.ts), so a thread woken for a job waits until the event
// loop yields. libuv wakes an idle thread for each job it queues through one
// glibc condition variable; once every idle thread has been signalled and
// none has run yet, the next signal waits, with the event loop blocked in it,
// until the threads signalled before have run (pthread_cond_signal switching
// its waiter groups). Under the mixed load (bench/RESULTS.md), in 3 s windows
// of five runs each: with 4 threads the loop blocked there 222-280 times, up
// to 9 ms at a time, and was held in the signalling call up to 42 ms; with 16
// a burst of jobs seldom outnumbers the idle threads: 0-33 such waits, none
// over 1 ms.
const POOL_THREADS = '16';

// Empty counts as unset: libuv would read it as one thread.
process.env['UV_THREADPOOL_SIZE'] ||= POOL_THREADS;
// A module that fails to load rejects unhandled: Node prints where and exits 1.
void import('./cli.js');
