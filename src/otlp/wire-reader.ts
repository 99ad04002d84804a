// A cursor over an OTLP request's protobuf bytes, for the readers that walk
// them in place (the JSON transcoder, the intake check): varints, fixed
// values and lengths, each read checked against the end of its message.
import { MalformedDataError } from '../shared/errors.js';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

export function malformed(what: string): MalformedDataError {
  return new MalformedDataError(`malformed protobuf ExportTraceServiceRequest: ${what}`);
}

/**
 * Buffer's per-encoding methods: what toString(encoding, start, end) and
 * write(string, offset, encoding) call after looking the encoding up.
 */
export interface RawBuffer extends Buffer {
  utf8Slice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
  utf8Write(text: string, offset: number): number;
}

/** A cursor over one input buffer; every read checks the end of the enclosing message. */
export class WireReader {
  readonly buf: RawBuffer;
  pos = 0;
  /** Low and high words of the last 64-bit value read. */
  lo = 0;
  hi = 0;
  /** End of the content of the last field read by delimited(). */
  contentEnd = 0;

  constructor(bytes: Uint8Array) {
    this.buf = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as RawBuffer;
  }

  /** A varint's low 32 bits. */
  uint32(end: number): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= end) throw malformed('a varint overruns its message');
    let byte = buf[pos++] as number;
    // Tags and most lengths are one byte.
    if (byte < 0x80) {
      this.pos = pos;
      return byte;
    }
    let result = byte & 0x7f;
    for (let shift = 7; shift < 70; shift += 7) {
      if (pos >= end) throw malformed('a varint overruns its message');
      byte = buf[pos++] as number;
      if (shift < 32) result |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.pos = pos;
        return result >>> 0;
      }
    }
    throw malformed('a varint is longer than 10 bytes');
  }

  /** Reads a 64-bit varint into lo / hi. */
  varint64(end: number): void {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw malformed('a varint overruns its message');
      const byte = this.buf[this.pos++] as number;
      const bits = byte & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28;
        hi |= bits >>> 4;
      } else hi |= bits << (7 * i - 32);
      if (byte < 0x80) {
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw malformed('a varint is longer than 10 bytes');
  }

  fixed32(end: number): number {
    if (this.pos + 4 > end) throw malformed('a fixed32 overruns its message');
    const value = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return value;
  }

  fixed64(end: number): void {
    if (this.pos + 8 > end) throw malformed('a fixed64 overruns its message');
    this.lo = this.buf.readUInt32LE(this.pos);
    this.hi = this.buf.readUInt32LE(this.pos + 4);
    this.pos += 8;
  }

  double(end: number): number {
    if (this.pos + 8 > end) throw malformed('a double overruns its message');
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /** Steps over a group's fields up to its end tag. */
  skipGroup(end: number): void {
    for (;;) {
      const t = this.uint32(end);
      if ((t & 7) === WIRE_END_GROUP) return;
      this.skip(t & 7, end);
    }
  }

  /** Steps over a varint of up to 10 bytes without reading its value. */
  skipVarint(end: number): void {
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw malformed('a varint overruns its message');
      if ((this.buf[this.pos++] as number) < 0x80) return;
    }
    throw malformed('a varint is longer than 10 bytes');
  }

  /** Reads a length prefix, checks the content fits, leaves pos at the content's start and returns its end. */
  lengthEnd(end: number): number {
    const length = this.uint32(end);
    const contentEnd = this.pos + length;
    if (contentEnd > end) throw malformed('a field overruns its message');
    return contentEnd;
  }

  /** Steps over a length-delimited field, returning its content's start; its end is left in contentEnd. */
  delimited(end: number): number {
    this.contentEnd = this.lengthEnd(end);
    const start = this.pos;
    this.pos = this.contentEnd;
    return start;
  }

  skip(wireType: number, end: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.skipVarint(end);
        return;
      case WIRE_FIXED64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.pos = this.lengthEnd(end);
        return;
      case WIRE_START_GROUP:
        this.skipGroup(end);
        return;
      case WIRE_FIXED32:
        this.pos += 4;
        break;
      default:
        throw malformed(`invalid wire type ${wireType}`);
    }
    if (this.pos > end) throw malformed('a field overruns its message');
  }

}
