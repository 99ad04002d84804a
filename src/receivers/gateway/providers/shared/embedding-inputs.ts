// Embedding helpers the provider adapters share: texts only (token arrays
// are an OpenAI-compatible upstream's alone) and reading number vectors out
// of untyped upstream JSON.
import { InvalidResponseError, type EmbeddingRequest } from './types.js';
import { invalidRequest } from './inputs.js';

/** The inputs as texts; token arrays are refused for provider types that take text only. */
export function textInputs(request: EmbeddingRequest, type: string): readonly string[] {
  const input = request.input;
  for (const item of input) if (typeof item !== 'string') invalidRequest('input', `token arrays are not supported by provider type ${type}; send text`);
  return input as readonly string[];
}

/** A vector from upstream JSON; throws an InvalidResponseError (the attempt's invalid_response) for anything else. */
export function vectorOf(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || !value.every((n) => typeof n === 'number')) throw new InvalidResponseError(`${what} is not a list of numbers`);
  return value as number[];
}

export function textOf(body: Uint8Array): string {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}

export function jsonOf(body: Uint8Array): unknown {
  return JSON.parse(textOf(body));
}

/** `items` in consecutive batches of at most `size`, for upstreams that cap the inputs of one call. */
export function batchesOf<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
}
