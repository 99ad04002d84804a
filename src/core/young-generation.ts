// Imported first by the CLI, for its side effect: V8 grows the young
// generation's semi-spaces from 1 to 16 MiB as objects survive, about 45 MiB
// more RSS at a steady 10,000 spans/s (bench/RESULTS.md). Heap-size flags
// such as --max-semi-space-size are fixed once the heap exists, but the
// growth factor is read at every growth, so setting it to 1 before the other
// modules load (their evaluation alone would grow it) keeps the initial size.
// Under heavy load that costs more than it saves (young-generation-policy.ts),
// so a check once a second gives V8 its default growth back while the event
// loop is busy, and takes it away again once it has been quiet for a while.
// While busy the old generation is also given more room between full
// collections (young-generation-policy.ts).
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { GrowthPolicy, heapFlags, LEAN } from './young-generation-policy.js';

const CHECK_INTERVAL_MS = 1_000;

setFlagsFromString(heapFlags(LEAN));

const policy = new GrowthPolicy();
let last = performance.eventLoopUtilization();
setInterval(function followLoad() {
  const now = performance.eventLoopUtilization();
  const mode = policy.next(performance.eventLoopUtilization(now, last).utilization);
  last = now;
  if (mode !== undefined) setFlagsFromString(heapFlags(mode));
}, CHECK_INTERVAL_MS).unref();
