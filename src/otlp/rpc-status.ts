// google.rpc.Status and google.rpc.RetryInfo, encoded by hand: three small
// messages do not justify loading googleapis protos. The OTLP/HTTP spec asks
// for a Status body on every 4xx/5xx; gRPC carries one (with RetryInfo for
// backpressure) in the `grpc-status-details-bin` trailer.
import protobuf from 'protobufjs';

const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';

const LEN = 2; // wire type: length-delimited
const VARINT = 0;

function tag(field: number, wireType: number): number {
  return (field << 3) | wireType;
}

/** RetryInfo { Duration retry_delay = 1 } with Duration { int64 seconds = 1; int32 nanos = 2 }. */
function encodeRetryInfo(retryAfterMs: number): Uint8Array {
  const ms = Math.max(0, Math.round(retryAfterMs));
  const writer = protobuf.Writer.create();
  writer.uint32(tag(1, LEN)).fork();
  const seconds = Math.floor(ms / 1000);
  const nanos = (ms % 1000) * 1_000_000;
  if (seconds !== 0) writer.uint32(tag(1, VARINT)).int64(seconds);
  if (nanos !== 0) writer.uint32(tag(2, VARINT)).int32(nanos);
  writer.ldelim();
  return writer.finish();
}

/** Status { int32 code = 1; string message = 2; repeated Any details = 3 }. */
export function encodeStatus(code: number, message: string, retryAfterMs?: number): Uint8Array {
  const writer = protobuf.Writer.create();
  if (code !== 0) writer.uint32(tag(1, VARINT)).int32(code);
  if (message !== '') writer.uint32(tag(2, LEN)).string(message);
  if (retryAfterMs !== undefined) {
    // Any { string type_url = 1; bytes value = 2 }
    writer.uint32(tag(3, LEN)).fork();
    writer.uint32(tag(1, LEN)).string(RETRY_INFO_TYPE_URL);
    writer.uint32(tag(2, LEN)).bytes(encodeRetryInfo(retryAfterMs));
    writer.ldelim();
  }
  return writer.finish();
}

export interface DecodedStatus {
  code: number;
  message: string;
  retryDelayMs: number | undefined;
}

/** The inverse of encodeStatus: tests, and the error a destination answers (exporters). */
export function decodeStatus(bytes: Uint8Array): DecodedStatus {
  const out: DecodedStatus = { code: 0, message: '', retryDelayMs: undefined };
  const reader = protobuf.Reader.create(bytes);
  while (reader.pos < reader.len) {
    const t = reader.uint32();
    if (t === tag(1, VARINT)) out.code = reader.int32();
    else if (t === tag(2, LEN)) out.message = reader.string();
    else if (t === tag(3, LEN)) {
      const any = protobuf.Reader.create(reader.bytes());
      let typeUrl = '';
      let value: Uint8Array = new Uint8Array();
      while (any.pos < any.len) {
        const at = any.uint32();
        if (at === tag(1, LEN)) typeUrl = any.string();
        else if (at === tag(2, LEN)) value = any.bytes();
        else any.skipType(at & 7);
      }
      if (typeUrl === RETRY_INFO_TYPE_URL) out.retryDelayMs = decodeRetryDelayMs(value);
    } else reader.skipType(t & 7);
  }
  return out;
}

function decodeRetryDelayMs(bytes: Uint8Array): number {
  const info = protobuf.Reader.create(bytes);
  let ms = 0;
  while (info.pos < info.len) {
    const t = info.uint32();
    if (t !== tag(1, LEN)) {
      info.skipType(t & 7);
      continue;
    }
    const duration = protobuf.Reader.create(info.bytes());
    while (duration.pos < duration.len) {
      const dt = duration.uint32();
      if (dt === tag(1, VARINT)) ms += Number(duration.int64()) * 1000;
      else if (dt === tag(2, VARINT)) ms += duration.int32() / 1_000_000;
      else duration.skipType(dt & 7);
    }
  }
  return ms;
}
