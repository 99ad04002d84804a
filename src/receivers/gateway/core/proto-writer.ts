// A minimal protobuf writer for the gateway's own spans: one growing buffer,
// nested messages written in place with their length patched in afterwards.
// Cheaper than building protobufjs objects (hex ids to bytes, int64 strings to
// Long) for data whose shape the gateway fixes itself.

import { varintSize } from '../../../otlp/wire.js';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;
/** Bytes reserved for a nested message's length: a varint of up to 2^35 - 1. */
const LENGTH_RESERVE = 5;
const INITIAL_SIZE = 64 * 1024;
// opentelemetry/proto/common/v1/common.proto: KeyValue and AnyValue fields.
const KEY_VALUE_KEY = 1;
const KEY_VALUE_VALUE = 2;
const ANY_STRING = 1;
const ANY_INT = 3;
const TAG_KEY = (KEY_VALUE_KEY << 3) | WIRE_LEN;
const TAG_VALUE = (KEY_VALUE_VALUE << 3) | WIRE_LEN;
const TAG_ANY_STRING = (ANY_STRING << 3) | WIRE_LEN;
const TAG_ANY_INT = (ANY_INT << 3) | WIRE_VARINT;

/** Strings up to this many chars are checked for ASCII and copied in JS: cheaper than a call into C++. */
const SHORT_STRING = 128;

/** value.length when it is short and all ASCII, else -1. */
function asciiLength(value: string): number {
  if (value.length > SHORT_STRING) return -1;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) >= 0x80) return -1;
  return value.length;
}

function hexDigit(code: number): number {
  // '0'-'9' -> 0-9, 'a'-'f' / 'A'-'F' -> 10-15 (ids are validated hex)
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

function isPlainVarint(value: number): boolean {
  return value >= 0 && value <= Number.MAX_SAFE_INTEGER;
}

export class ProtoWriter {
  #buf: Buffer = Buffer.allocUnsafe(INITIAL_SIZE);
  #pos = 0;

  /** Starts a length-delimited field; pass the result to end(). */
  begin(field: number): number {
    this.#ensure(LENGTH_RESERVE + 2);
    this.#tag(field, WIRE_LEN);
    const mark = this.#pos;
    this.#pos += LENGTH_RESERVE;
    return mark;
  }

  /** Ends the field begun at `mark`: writes its length and moves the content up to it. */
  end(mark: number): void {
    const content = mark + LENGTH_RESERVE;
    const length = this.#pos - content;
    let at = mark;
    let value = length;
    while (value >= 0x80) {
      this.#buf[at++] = (value & 0x7f) | 0x80;
      value = Math.floor(value / 128);
    }
    this.#buf[at++] = value;
    if (at < content) {
      this.#buf.copyWithin(at, content, this.#pos);
      this.#pos -= content - at;
    }
  }

  string(field: number, value: string): void {
    const ascii = asciiLength(value);
    const length = ascii >= 0 ? ascii : Buffer.byteLength(value);
    this.#ensure(length + 12);
    this.#tag(field, WIRE_LEN);
    this.#varint(length);
    this.#put(value, ascii >= 0);
  }

  /** A KeyValue field with a string value, lengths computed up front (the common case, no moves). */
  keyValueString(field: number, key: string, value: string): void {
    const keyAscii = asciiLength(key);
    const valueAscii = asciiLength(value);
    const keyLength = keyAscii >= 0 ? keyAscii : Buffer.byteLength(key);
    const valueLength = valueAscii >= 0 ? valueAscii : Buffer.byteLength(value);
    this.#keyValueHead(field, key, keyAscii, keyLength, 1 + varintSize(valueLength) + valueLength);
    this.#buf[this.#pos++] = TAG_ANY_STRING;
    this.#varint(valueLength);
    this.#put(value, valueAscii >= 0);
  }

  /** A KeyValue field with an int64 value. */
  keyValueInt(field: number, key: string, value: number): void {
    if (!isPlainVarint(value)) {
      const kv = this.begin(field);
      this.string(KEY_VALUE_KEY, key);
      const any = this.begin(KEY_VALUE_VALUE);
      this.int(ANY_INT, value);
      this.end(any);
      this.end(kv);
      return;
    }
    const keyAscii = asciiLength(key);
    const keyLength = keyAscii >= 0 ? keyAscii : Buffer.byteLength(key);
    this.#keyValueHead(field, key, keyAscii, keyLength, 1 + varintSize(value));
    this.#buf[this.#pos++] = TAG_ANY_INT;
    this.#varint(value);
  }

  /**
   * A KeyValue field up to its AnyValue's own first tag: the lengths are known
   * up front, so nothing is written twice. Reserves room for the AnyValue too.
   */
  #keyValueHead(field: number, key: string, keyAscii: number, keyLength: number, any: number): void {
    const kv = 1 + varintSize(keyLength) + keyLength + 1 + varintSize(any) + any;
    this.#ensure(kv + 12);
    this.#tag(field, WIRE_LEN);
    this.#varint(kv);
    this.#buf[this.#pos++] = TAG_KEY;
    this.#varint(keyLength);
    this.#put(key, keyAscii >= 0);
    this.#buf[this.#pos++] = TAG_VALUE;
    this.#varint(any);
  }

  /** A bytes field from a hex string (trace and span ids). */
  hex(field: number, value: string): void {
    const length = value.length >>> 1;
    this.#ensure(length + 12);
    this.#tag(field, WIRE_LEN);
    this.#varint(length);
    const buf = this.#buf;
    let at = this.#pos;
    for (let i = 0; i < length * 2; i += 2) buf[at++] = (hexDigit(value.charCodeAt(i)) << 4) | hexDigit(value.charCodeAt(i + 1));
    this.#pos = at;
  }

  /** A bytes field copied as is (an already encoded message). */
  bytes(field: number, value: Uint8Array): void {
    this.#ensure(value.length + 12);
    this.#tag(field, WIRE_LEN);
    this.#varint(value.length);
    this.#buf.set(value, this.#pos);
    this.#pos += value.length;
  }

  /** int64 / enum: negative values take ten bytes (two's complement), as protobuf says; NaN is written as 0. */
  int(field: number, value: number): void {
    this.#ensure(22);
    this.#tag(field, WIRE_VARINT);
    if (isPlainVarint(value)) {
      this.#varint(value);
      return;
    }
    let wide = BigInt.asUintN(64, BigInt(Number.isFinite(value) ? Math.trunc(value) : 0));
    while (wide >= 0x80n) {
      this.#buf[this.#pos++] = Number(wide & 0x7fn) | 0x80;
      wide >>= 7n;
    }
    this.#buf[this.#pos++] = Number(wide);
  }

  fixed64(field: number, value: bigint): void {
    this.#ensure(12);
    this.#tag(field, WIRE_FIXED64);
    this.#buf.writeBigUInt64LE(value, this.#pos);
    this.#pos += 8;
  }

  double(field: number, value: number): void {
    this.#ensure(12);
    this.#tag(field, WIRE_FIXED64);
    this.#buf.writeDoubleLE(value, this.#pos);
    this.#pos += 8;
  }

  fixed32(field: number, value: number): void {
    this.#ensure(12);
    this.#tag(field, WIRE_FIXED32);
    this.#buf.writeUInt32LE(value >>> 0, this.#pos);
    this.#pos += 4;
  }

  /** Drops whatever was written (after a failed encode). */
  reset(): void {
    this.#pos = 0;
  }

  /** Bytes written so far: a point truncate() can go back to. */
  get length(): number {
    return this.#pos;
  }

  /** Drops what was written after `length` (a field that failed half-way). */
  truncate(length: number): void {
    this.#pos = Math.min(this.#pos, length);
  }

  /** The bytes written so far, copied out; the writer starts over. */
  finish(): Uint8Array {
    const out = Buffer.from(this.#buf.subarray(0, this.#pos));
    this.#pos = 0;
    return out;
  }

  /** Writes a string whose byte length the caller already wrote; `ascii` from asciiLength. */
  #put(value: string, ascii: boolean): void {
    if (!ascii) {
      this.#pos += this.#buf.write(value, this.#pos);
      return;
    }
    const buf = this.#buf;
    let at = this.#pos;
    for (let i = 0; i < value.length; i++) buf[at++] = value.charCodeAt(i);
    this.#pos = at;
  }

  #tag(field: number, wire: number): void {
    this.#varint((field << 3) | wire);
  }

  #varint(value: number): void {
    while (value >= 0x80) {
      this.#buf[this.#pos++] = (value & 0x7f) | 0x80;
      value = Math.floor(value / 128);
    }
    this.#buf[this.#pos++] = value;
  }

  #ensure(extra: number): void {
    if (this.#pos + extra <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + extra));
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }
}
