// Reads a few string attributes straight from encoded Resource and Span
// messages, without decoding the rest: sampling needs three or four keys, and
// a full decode of every root span would cost more than the whole decision.
import protobuf from 'protobufjs';
import { MalformedDataError } from '../../shared/errors.js';

// Field numbers from the OTLP protos.
const RESOURCE_ATTRIBUTES = 1;
const SPAN_ATTRIBUTES = 9;
const KEY_VALUE_KEY = 1;
const KEY_VALUE_VALUE = 2;
const ANY_STRING = 1;
const ANY_BOOL = 2;
const ANY_INT = 3;
const ANY_DOUBLE = 4;
const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;

function scalarOf(reader: protobuf.Reader, end: number): string | undefined {
  let value: string | undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === ANY_STRING && wireType === WIRE_LEN) value = reader.string();
    else if (field === ANY_BOOL && wireType === WIRE_VARINT) value = String(reader.bool());
    else if (field === ANY_INT && wireType === WIRE_VARINT) value = reader.int64().toString();
    else if (field === ANY_DOUBLE && wireType === WIRE_FIXED64) value = String(reader.double());
    else reader.skipType(wireType);
  }
  return value;
}

/** The wanted attributes' values (as strings) from a message whose attributes are field `attributesField`. */
function readAttributes(bytes: Uint8Array, attributesField: number, wanted: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  const reader = protobuf.Reader.create(bytes);
  try {
    while (reader.pos < bytes.length) {
      const tag = reader.uint32();
      if (tag >>> 3 !== attributesField || (tag & 7) !== WIRE_LEN) {
        reader.skipType(tag & 7);
        continue;
      }
      const end = reader.uint32() + reader.pos;
      let key: string | undefined;
      let value: string | undefined;
      while (reader.pos < end) {
        const kvTag = reader.uint32();
        if (kvTag >>> 3 === KEY_VALUE_KEY && (kvTag & 7) === WIRE_LEN) {
          key = reader.string();
        } else if (kvTag >>> 3 === KEY_VALUE_VALUE && (kvTag & 7) === WIRE_LEN && (key === undefined || wanted.has(key))) {
          const valueEnd = reader.uint32() + reader.pos;
          value = scalarOf(reader, valueEnd);
          reader.pos = valueEnd;
        } else {
          reader.skipType(kvTag & 7);
        }
      }
      reader.pos = end;
      if (key !== undefined && value !== undefined && wanted.has(key) && !found.has(key)) found.set(key, value);
    }
  } catch (err) {
    throw new MalformedDataError(`malformed attributes: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return found;
}

export function resourceAttributes(resource: Uint8Array, wanted: ReadonlySet<string>): Map<string, string> {
  return readAttributes(resource, RESOURCE_ATTRIBUTES, wanted);
}

export function spanAttributes(span: Uint8Array, wanted: ReadonlySet<string>): Map<string, string> {
  return readAttributes(span, SPAN_ATTRIBUTES, wanted);
}
