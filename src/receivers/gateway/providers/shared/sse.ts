// Server-sent events (WHATWG HTML "event stream" parsing), enough for the
// upstream streams the gateway reads: `event:` and `data:` fields, multi-line
// data joined with "\n", comments and `id:`/`retry:` ignored, events ended by
// a blank line, CRLF/CR/LF line endings, UTF-8 split across chunk boundaries.
//
// SseParser is synchronous, and so is SseStreamMapper over it: the gateway
// feeds a stream's body parts straight from undici's data callbacks, with no
// async step per chunk, which shows at 20,000 chunks a second.
import { eventTooLarge, MAX_EVENT_CHARS } from './answer-limits.js';
import type { ChatCompletionChunk, Usage } from './openai-types.js';
import type { StreamMapper } from './types.js';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

const NO_EVENTS: readonly SseEvent[] = [];

export class SseParser {
  // The byte order mark a stream may open with is dropped by #opening, not by
  // the decoder: the decoder would drop one at the start of whatever it
  // decodes first, which need not be the start of the stream.
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The decoder may hold the first bytes of a character split across chunks. */
  #split = false;
  #started = false;
  /**
   * The pieces of a line not ended yet. Kept apart and joined once the line
   * ends, so a line that comes in many parts (a megabyte of base64 image) is
   * searched and copied once, not again with every part.
   */
  #pending: string[] = [];
  /**
   * Characters the event being read holds: its data so far and the line
   * pending. Past MAX_EVENT_CHARS the parser throws: a line that never
   * ends, or an event that never does, must not be held without end.
   */
  #held = 0;
  /** The last line ended with a CR at the end of its text: an LF opening the next text is that line's CRLF. */
  #afterCr = false;
  #event: string | undefined;
  #data: string[] = [];

  /** The events this chunk of the body completes; throws once an event grows past MAX_EVENT_CHARS. */
  push(chunk: Uint8Array): readonly SseEvent[] {
    if (chunk.length === 0) return NO_EVENTS;
    // A chunk that ends in ASCII with nothing held over from the last one is
    // whole UTF-8 (most are: an event ends in "\n\n"); Buffer decodes it
    // faster than the streaming decoder, which is kept for the rest.
    const last = chunk[chunk.length - 1] as number;
    if (!this.#split && last < 0x80 && Buffer.isBuffer(chunk)) return this.#lines(chunk.toString('utf8'));
    const text = this.#decoder.decode(chunk, { stream: true });
    this.#split = last >= 0x80;
    return this.#lines(text);
  }

  /** The events left when the body ends; the last one may lack its blank line. */
  end(): readonly SseEvent[] {
    const events = [...this.#lines(this.#decoder.decode())];
    if (this.#pending.length > 0) {
      const line = this.#pending.join('');
      this.#pending = [];
      this.#held -= line.length;
      const event = this.#line(line);
      if (event !== undefined) events.push(event);
    }
    const last = this.#line('');
    if (last !== undefined) events.push(last);
    return events;
  }

  #opening(text: string): string {
    if (this.#started || text === '') return text;
    this.#started = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  /** The events the lines this text ends complete; what follows its last line end waits in #pending. */
  #lines(decoded: string): readonly SseEvent[] {
    const text = this.#opening(decoded);
    if (text === '') return NO_EVENTS;
    let events: SseEvent[] | undefined;
    let start = 0;
    if (this.#afterCr) {
      this.#afterCr = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    // The next CR at or after `start`, found once and reused: most streams have none.
    let cr = text.indexOf('\r', start);
    for (;;) {
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      const lf = text.indexOf('\n', start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr === text.length - 1) {
          // The LF of a CRLF may open the next text.
          this.#afterCr = true;
          next = cr + 1;
        } else next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      let line = text.slice(start, end);
      if (this.#pending.length > 0) {
        this.#pending.push(line);
        line = this.#pending.join('');
        this.#pending = [];
        this.#held -= line.length - (end - start);
      }
      start = next;
      const event = this.#line(line);
      if (event !== undefined) (events ??= []).push(event);
    }
    if (start < text.length) {
      this.#pending.push(start === 0 ? text : text.slice(start));
      this.#hold(text.length - start);
    }
    return events ?? NO_EVENTS;
  }

  /** One line: a blank one completes the event, if it has data. */
  #line(line: string): SseEvent | undefined {
    if (line === '') {
      const event = this.#data.length > 0 ? { event: this.#event, data: this.#data.join('\n') } : undefined;
      this.#event = undefined;
      this.#data = [];
      this.#held = 0;
      return event;
    }
    if (line.charCodeAt(0) === 58) return undefined; // ':' starts a comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.#data.push(value);
      // With the line break that joins it to the next: empty data lines make an event too.
      this.#hold(value.length + 1);
    } else if (field === 'event') this.#event = value;
    return undefined;
  }

  #hold(chars: number): void {
    this.#held += chars;
    if (this.#held > MAX_EVENT_CHARS) throw eventTooLarge();
  }
}

/** What an adapter whose upstream streams SSE maps, one event at a time. */
export interface SseEventMapper {
  /** Adds the event's chunks to `out`; returns true when the upstream has said the stream is over. */
  event(event: SseEvent, out: ChatCompletionChunk[]): boolean;
  /** The body ended before the stream said it was over: adds the last chunks to `out`, or throws. */
  end(out: ChatCompletionChunk[]): void;
  /** Usage told before the final report (StreamMapper.usageSoFar). */
  readonly usageSoFar?: Usage | undefined;
}

/** A StreamMapper over an SSE body; events after the one that finished the stream are ignored. */
export class SseStreamMapper implements StreamMapper {
  finished = false;
  error: unknown;
  readonly #parser = new SseParser();
  readonly #events: SseEventMapper;

  get usageSoFar(): Usage | undefined {
    return this.#events.usageSoFar;
  }

  constructor(events: SseEventMapper) {
    this.#events = events;
  }

  push(part: Uint8Array): readonly ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    if (this.#open()) this.#map(this.#parse(part), out);
    return out;
  }

  end(): readonly ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    if (this.#open()) this.#map(this.#parse(undefined), out);
    if (!this.#open()) return out;
    try {
      this.#events.end(out);
    } catch (err) {
      this.error = err;
    }
    return out;
  }

  /** The events a part (or the body's end) completes; an event too large to read stops mapping. */
  #parse(part: Uint8Array | undefined): readonly SseEvent[] {
    try {
      return part === undefined ? this.#parser.end() : this.#parser.push(part);
    } catch (err) {
      this.error = err;
      return NO_EVENTS;
    }
  }

  #open(): boolean {
    return !this.finished && this.error === undefined;
  }

  #map(events: readonly SseEvent[], out: ChatCompletionChunk[]): void {
    for (const event of events) {
      try {
        if (this.#events.event(event, out)) {
          this.finished = true;
          return;
        }
      } catch (err) {
        this.error = err;
        return;
      }
    }
  }
}
