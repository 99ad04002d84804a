// The worker thread of body-decode.ts: checks an OTLP request, off the event
// loop that serves every listener. A JSON body is parsed, checked and encoded
// as protobuf; a protobuf body is checked and sent back as it came. Answers
// each body with its protobuf bytes (their buffer transferred) or the reason
// it is malformed.
import { parentPort } from 'node:worker_threads';
import { decodeInline, ownBuffer, type DecodeReply, type DecodeTask } from './body-decode.js';
import { collectGarbage } from '../../shared/full-gc.js';

/**
 * Idle this long after its last body, the thread collects its garbage (ms).
 * An idle thread collects none by itself: the heap a burst of large bodies
 * left (185 MiB after twelve 9.5 MiB JSON bodies) kept RSS up for good, and
 * with it service.memory_limit_mib's refusals.
 */
const COLLECT_WHEN_IDLE_MS = 1_000;
let idle: NodeJS.Timeout | undefined;

parentPort?.on('message', function decode({ id, encoding, body }: DecodeTask) {
  let reply: DecodeReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const proto = ownBuffer(decodeInline(encoding, body).toProto());
    reply = { id, proto };
    transfer = [proto.buffer as ArrayBuffer];
  } catch (err) {
    reply = { id, malformed: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(reply, transfer);
  clearTimeout(idle);
  idle = setTimeout(collectGarbage, COLLECT_WHEN_IDLE_MS);
});
