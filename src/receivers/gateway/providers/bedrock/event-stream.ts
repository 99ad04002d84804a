// The binary framing of ConverseStream (application/vnd.amazon.eventstream):
// each frame starts with its total length (uint32, big-endian); the codec
// checks both CRCs and parses the headers. Frames may straddle chunks.
import { crc32 } from 'node:zlib';
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { UpstreamStreamError } from '../shared/types.js';

/** Total length (4) + headers length (4) + the CRC of those 8 bytes (4). */
const PRELUDE = 12;
/** Prelude + message CRC (4). */
const MIN_FRAME = PRELUDE + 4;
/** The event-stream spec's limit for one message. */
const MAX_FRAME = 16 * 1024 * 1024;

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/**
 * Splits an event-stream body into messages as its parts arrive. The parts
 * of a frame not whole yet are kept apart and joined once enough of it is
 * here (its prelude, then all of it): joining them on every part would copy
 * a 16 MiB frame that comes in 64 KiB parts some 2 GiB over.
 */
export class EventStreamDecoder {
  /** Copies of the parts the frame being read has so far, and their size. */
  #parts: Uint8Array[] = [];
  #size = 0;
  /** Bytes held that the next look at the frame needs: its prelude, then its whole length. */
  #needed = 0;

  /** Hands each message this part of the body completes to `take`, in order; a bad frame throws. */
  push(part: Uint8Array, take: (message: Message) => void): void {
    let buffer = part;
    if (this.#size > 0) {
      // The part's owner may reuse it: what is held is a copy (a Buffer's slice() is a view).
      this.#parts.push(new Uint8Array(part));
      this.#size += part.length;
      if (this.#size < this.#needed) return;
      buffer = concat(this.#parts, this.#size);
      this.#parts = [];
      this.#size = 0;
    }
    let total = 0;
    while (buffer.length >= 4) {
      const prelude = new DataView(buffer.buffer, buffer.byteOffset, Math.min(buffer.length, PRELUDE));
      total = prelude.getUint32(0);
      if (total < MIN_FRAME || total > MAX_FRAME) throw new UpstreamStreamError(`bedrock sent an event-stream frame of ${total} bytes`);
      // A length that is wrong would have the rest of the stream waited for as this frame: its CRC is checked as soon as it is here.
      if (buffer.length >= PRELUDE && crc32(buffer.subarray(0, 8)) !== prelude.getUint32(8)) throw new UpstreamStreamError('bedrock sent a malformed event-stream frame: its prelude checksum does not match');
      if (buffer.length < total) break;
      let message: Message;
      try {
        message = codec.decode(buffer.subarray(0, total));
      } catch (err) {
        throw new UpstreamStreamError(`bedrock sent a malformed event-stream frame: ${err instanceof Error ? err.message : String(err)}`);
      }
      buffer = buffer.subarray(total);
      take(message);
    }
    if (buffer.length === 0) return;
    this.#parts = [buffer.buffer === part.buffer ? new Uint8Array(buffer) : buffer];
    this.#size = buffer.length;
    this.#needed = buffer.length < PRELUDE ? PRELUDE : total;
  }

  /** Throws if the body ended inside a frame. */
  end(): void {
    if (this.#size > 0) throw new UpstreamStreamError('bedrock stream ended inside an event-stream frame');
  }
}

export function headerString(message: Message, name: string): string | undefined {
  const header = message.headers[name];
  return header?.type === 'string' ? header.value : undefined;
}

function concat(parts: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
