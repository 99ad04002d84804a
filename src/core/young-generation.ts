// Imported first by the CLI, for its side effect: V8 grows the young
// generation's semi-spaces from 1 to 16 MiB as objects survive, about 45 MiB
// more RSS at a steady 10,000 spans/s (bench/RESULTS.md). Heap-size flags
// such as --max-semi-space-size are fixed once the heap exists, but the
// growth factor is read at every growth, so setting it to 1 before the other
// modules load (their evaluation alone would grow it) keeps the initial size.
// The price is more scavenges at full load: a lower maximum throughput.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
