// How much of one upstream answer the gateway holds in memory. A misbehaving
// upstream (or a base_url that leads to the wrong server) could otherwise
// send an endless body, or an SSE line that never ends, and have it all
// buffered until the process dies. The bounds sit far above any real answer;
// past one the attempt fails as an unreadable answer would, and its
// connection is dropped.
import { InvalidResponseError, UpstreamStreamError } from './types.js';

const MiB = 1024 * 1024;

/**
 * Bytes of a non-2xx answer read: its error is at the start. The rest is not
 * read; the connection is dropped.
 */
export const MAX_ERROR_BODY_BYTES = 1 * MiB;

/**
 * Bytes of a whole 2xx answer. The largest real ones are embeddings: OpenAI
 * answers 2048 inputs of 3072 dimensions with about 140 MB of pretty-printed
 * floats. Gemini's generated images come inline too.
 */
export const MAX_ANSWER_BYTES = 256 * MiB;

/**
 * Characters of one server-sent event, its lines included as they arrive.
 * Gemini streams a generated image whole in one event (a 4K image is some
 * ten MiB of base64). Bedrock's event-stream frames have the spec's own
 * limit of 16 MiB (bedrock/event-stream.ts).
 */
export const MAX_EVENT_CHARS = 32 * MiB;

export function answerTooLarge(): InvalidResponseError {
  return new InvalidResponseError(`its body passed ${MAX_ANSWER_BYTES / MiB} MiB, the most the gateway reads of a whole answer`);
}

export function eventTooLarge(): UpstreamStreamError {
  return new UpstreamStreamError(`its stream sent an event longer than ${MAX_EVENT_CHARS / MiB} MiB, the most the gateway reads of one event`);
}
