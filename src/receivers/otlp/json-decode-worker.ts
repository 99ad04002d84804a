// The worker thread of json-decode.ts: parses and checks an OTLP/JSON
// request and encodes it as protobuf, off the event loop that serves every
// listener. Answers each body with its protobuf bytes (their buffer
// transferred) or the reason it is malformed.
import { parentPort } from 'node:worker_threads';
import { decodeInline, type DecodeReply, type DecodeTask } from './json-decode.js';

parentPort?.on('message', function decode({ id, body }: DecodeTask) {
  let reply: DecodeReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const proto = decodeInline(body).toProto();
    reply = { id, proto };
    // A buffer of its own moves without a copy; a slice of Node's shared pool is copied.
    if (proto.byteOffset === 0 && proto.byteLength === proto.buffer.byteLength) transfer = [proto.buffer as ArrayBuffer];
  } catch (err) {
    reply = { id, malformed: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(reply, transfer);
});
