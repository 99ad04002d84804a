// Parallel tool calls that some servers (Ollama) stream all under index 0,
// each with its own id: where one call ends and the next begins, for the
// protocols that rebuild calls from chunks (Messages, the AI SDK's).
import type { ToolCallDelta } from '../providers/shared/openai-types.js';

/** A call being streamed: the id its upstream gave it ('' until one came), its tool, its arguments so far. */
export interface StreamedCall {
  readonly upstreamId: string;
  readonly name: string;
  readonly args: string;
}

/** Arguments that parse whole: a call an upstream is done with (more would make them invalid). */
export function isWholeJson(args: string): boolean {
  try {
    JSON.parse(args);
    return true;
  } catch {
    return false;
  }
}

/**
 * A delta that names a tool under another id than the call's, once the call
 * has its name and its arguments are whole, starts a call of its own; so
 * does one naming another tool than a call with no arguments yet (a tool
 * without parameters). (Others change a call's id after its first delta, as
 * Poolside does, without naming it again, or naming the same tool: that
 * delta goes on with the call.)
 */
export function startsAnotherCall(delta: ToolCallDelta, call: StreamedCall): boolean {
  const name = delta.function?.name;
  if (name === undefined || name === '' || call.name === '') return false;
  if (delta.id === undefined || delta.id === '' || call.upstreamId === '' || delta.id === call.upstreamId) return false;
  return call.args === '' ? name !== call.name : isWholeJson(call.args);
}
