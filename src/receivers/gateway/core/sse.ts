// Server-sent events (WHATWG HTML "event stream" parsing), enough for the
// upstream streams the gateway reads: `event:` and `data:` fields, multi-line
// data joined with "\n", comments and `id:`/`retry:` ignored, events ended by
// a blank line, CRLF/CR/LF line endings, UTF-8 split across chunk boundaries.

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];

  function* takeLines(final: boolean): Generator<SseEvent> {
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer);
      if (match === null) break;
      // A trailing lone CR may be the first half of CRLF: wait for more input.
      if (match[0] === '\r' && match.index === buffer.length - 1 && !final) break;
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        event = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
  }

  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* takeLines(false);
  }
  buffer += decoder.decode();
  if (buffer !== '') buffer += '\n';
  yield* takeLines(true);
  // A stream that ends without the final blank line still delivers its last event.
  if (data.length > 0) yield { event, data: data.join('\n') };
}
