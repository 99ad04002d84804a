// Server-sent events (WHATWG HTML "event stream" parsing), enough for the
// upstream streams the gateway reads: `event:` and `data:` fields, multi-line
// data joined with "\n", comments and `id:`/`retry:` ignored, events ended by
// a blank line, CRLF/CR/LF line endings, UTF-8 split across chunk boundaries.
//
// SseParser is synchronous, and so is SseStreamMapper over it: the gateway
// feeds a stream's body parts straight from undici's data callbacks, with no
// async step per chunk, which shows at 20,000 chunks a second.
import type { ChatCompletionChunk, Usage } from './openai-types.js';
import type { StreamMapper } from './types.js';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

const NO_EVENTS: readonly SseEvent[] = [];

export class SseParser {
  // The byte order mark a stream may open with is dropped by #text, not by the
  // decoder: the decoder would drop one at the start of whatever it decodes
  // first, which need not be the start of the stream.
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The decoder may hold the first bytes of a character split across chunks. */
  #split = false;
  #started = false;
  #buffer = '';
  #event: string | undefined;
  #data: string[] = [];

  /** The events this chunk of the body completes. */
  push(chunk: Uint8Array): readonly SseEvent[] {
    if (chunk.length === 0) return NO_EVENTS;
    // A chunk that ends in ASCII with nothing held over from the last one is
    // whole UTF-8 (most are: an event ends in "\n\n"); Buffer decodes it
    // faster than the streaming decoder, which is kept for the rest.
    const last = chunk[chunk.length - 1] as number;
    if (!this.#split && last < 0x80 && Buffer.isBuffer(chunk)) this.#text(chunk.toString('utf8'));
    else {
      this.#text(this.#decoder.decode(chunk, { stream: true }));
      this.#split = last >= 0x80;
    }
    return this.#takeLines(false);
  }

  /** The events left when the body ends; the last one may lack its blank line. */
  end(): readonly SseEvent[] {
    this.#text(this.#decoder.decode());
    if (this.#buffer !== '') this.#buffer += '\n';
    const events = [...this.#takeLines(true)];
    if (this.#data.length > 0) events.push({ event: this.#event, data: this.#data.join('\n') });
    this.#event = undefined;
    this.#data = [];
    return events;
  }

  #text(text: string): void {
    if (this.#started) this.#buffer += text;
    else if (text !== '') {
      this.#started = true;
      this.#buffer += text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    }
  }

  #takeLines(final: boolean): readonly SseEvent[] {
    const buffer = this.#buffer;
    let events: SseEvent[] | undefined;
    let start = 0;
    // The next CR at or after `start`, found once and reused: most streams have none.
    let cr = buffer.indexOf('\r');
    for (;;) {
      if (cr !== -1 && cr < start) cr = buffer.indexOf('\r', start);
      const lf = buffer.indexOf('\n', start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A trailing lone CR may be the first half of CRLF: wait for more input.
        if (cr === buffer.length - 1 && !final) break;
        end = cr;
        next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      const line = buffer.slice(start, end);
      start = next;
      if (line === '') {
        if (this.#data.length > 0) (events ??= []).push({ event: this.#event, data: this.#data.join('\n') });
        this.#event = undefined;
        this.#data = [];
        continue;
      }
      if (line.charCodeAt(0) === 58) continue; // ':' starts a comment
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === 'data') this.#data.push(value);
      else if (field === 'event') this.#event = value;
    }
    this.#buffer = start === 0 ? buffer : buffer.slice(start);
    return events ?? NO_EVENTS;
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
    if (this.#open()) this.#map(this.#parser.push(part), out);
    return out;
  }

  end(): readonly ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    if (this.#open()) this.#map(this.#parser.end(), out);
    if (!this.#open()) return out;
    try {
      this.#events.end(out);
    } catch (err) {
      this.error = err;
    }
    return out;
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
