// The worker thread of body-decode.ts: checks an OTLP request, off the event
// loop that serves every listener. A JSON body is parsed, checked and encoded
// as protobuf; a protobuf body is checked and sent back as it came. Answers
// each body with its protobuf bytes (their buffer transferred) or the reason
// it is malformed.
import { parentPort } from 'node:worker_threads';
import { decodeInline, ownBuffer, type DecodeReply, type DecodeTask } from './body-decode.js';

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
});
