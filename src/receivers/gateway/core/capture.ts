// capture_content: prompt and completion as the GenAI semantic conventions'
// gen_ai.input.messages / gen_ai.output.messages JSON. Image data never goes
// into a span: data URLs are reduced to their media type.
import { calledWith, type ChatCompletion, type ChatMessage, type ContentPart, type CustomToolCall, type RefusalPart, type ToolCall } from '../providers/shared/openai-types.js';

/** The conventions' modalities; a file of another kind (a PDF, text) is a document. */
type Modality = 'image' | 'audio' | 'video' | 'document';

type Part =
  | { type: 'text'; content: string }
  | { type: 'uri'; modality: 'image'; uri: string }
  | { type: 'blob'; modality: Modality; mime_type?: string; content: '[omitted]' }
  | { type: 'file'; modality: Modality; file_id: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_call_response'; id: string; response: string };

interface CapturedMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

function contentParts(content: string | ReadonlyArray<ContentPart | RefusalPart> | null | undefined): Part[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', content }];
  return content.map(function toPart(part): Part {
    if (part.type === 'text') return { type: 'text', content: part.text };
    if (part.type === 'refusal') return { type: 'text', content: part.refusal };
    if (part.type === 'input_audio') return { type: 'blob', modality: 'audio', mime_type: `audio/${part.input_audio.format}`, content: '[omitted]' };
    if (part.type === 'file') return filePart(part.file);
    const url = part.image_url.url;
    if (!url.startsWith('data:')) return { type: 'uri', modality: 'image', uri: url };
    return { type: 'blob', modality: 'image', mime_type: url.slice(5, url.indexOf(';')), content: '[omitted]' };
  });
}

/** A file by id is the conventions' file part; one sent inline a blob, its data omitted as an image's is. */
function filePart(file: { file_data?: string; file_id?: string }): Part {
  if (file.file_id !== undefined) return { type: 'file', modality: 'document', file_id: file.file_id };
  const mimeType = file.file_data === undefined ? undefined : mediaTypeOf(file.file_data);
  if (mimeType === undefined) return { type: 'blob', modality: 'document', content: '[omitted]' };
  return { type: 'blob', modality: modalityOf(mimeType), mime_type: mimeType, content: '[omitted]' };
}

/** A media type's most characters: RFC 6838's type and subtype, 127 each, and the slash. */
const MEDIA_TYPE_CHARS = 255;

/**
 * A data URL's media type, before its first `;` or `,`; none for another
 * string, or when neither comes within a media type's length, so a malformed
 * URL's data (the schema does not check a file's) is never recorded in its place.
 */
function mediaTypeOf(url: string): string | undefined {
  if (!url.startsWith('data:')) return undefined;
  const end = url.slice(0, 5 + MEDIA_TYPE_CHARS + 1).search(/[;,]/);
  return end === -1 ? undefined : url.slice(5, end);
}

function modalityOf(mimeType: string): Modality {
  const kind = mimeType.slice(0, mimeType.indexOf('/'));
  return kind === 'image' || kind === 'audio' || kind === 'video' ? kind : 'document';
}

function toolCallParts(calls: ReadonlyArray<ToolCall | CustomToolCall> | undefined): Part[] {
  // A custom tool's free-form input stands where a function's arguments would.
  return (calls ?? []).map(function toolCallPart(call): Part {
    const { name, input } = calledWith(call);
    return { type: 'tool_call', id: call.id, name, arguments: input };
  });
}

export function captureInput(messages: readonly ChatMessage[]): string {
  const captured = messages.map(function toCaptured(m): CapturedMessage {
    if (m.role === 'tool') {
      const text = typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join('');
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.tool_call_id, response: text }] };
    }
    if (m.role === 'function') return { role: 'tool', parts: [{ type: 'tool_call_response', id: m.name, response: m.content ?? '' }] };
    if (m.role === 'assistant') return { role: 'assistant', parts: [...contentParts(m.content), ...refusalParts(m.refusal), ...toolCallParts(m.tool_calls)] };
    return { role: m.role, parts: contentParts(m.content) };
  });
  return JSON.stringify(captured);
}

/** A conversation captured from an API that takes system instructions apart from the chat history (Messages' `system`). */
export interface CapturedConversation {
  /** gen_ai.system_instructions: the parts of the instructions, when there are any. */
  readonly systemInstructions: string | undefined;
  readonly inputMessages: string;
}

/**
 * Captures messages whose first, when its role is system, stands for
 * instructions given apart from the history: the conventions record those in
 * gen_ai.system_instructions (a list of parts), not gen_ai.input.messages.
 */
export function captureWithInstructions(messages: readonly ChatMessage[]): CapturedConversation {
  const first = messages[0];
  if (first?.role !== 'system') return { systemInstructions: undefined, inputMessages: captureInput(messages) };
  return { systemInstructions: JSON.stringify(contentParts(first.content)), inputMessages: captureInput(messages.slice(1)) };
}

export interface CapturedChoice {
  content: string;
  /** The model's refusal (`message.refusal`, streamed as `delta.refusal`), recorded as text as a refusal part of the input is. */
  refusal?: string;
  toolCalls: Array<ToolCall | CustomToolCall>;
  finishReason: string | null;
}

function refusalParts(refusal: string | null | undefined): Part[] {
  return refusal === null || refusal === undefined || refusal === '' ? [] : [{ type: 'text', content: refusal }];
}

export function captureOutput(choices: readonly CapturedChoice[]): string {
  return JSON.stringify(
    choices.map(function toCaptured(c): CapturedMessage {
      const parts: Part[] = c.content === '' ? [] : [{ type: 'text', content: c.content }];
      const message: CapturedMessage = { role: 'assistant', parts: [...parts, ...refusalParts(c.refusal), ...toolCallParts(c.toolCalls)] };
      if (c.finishReason !== null) message.finish_reason = c.finishReason;
      return message;
    }),
  );
}

export function choicesOf(completion: ChatCompletion): CapturedChoice[] {
  return completion.choices.map((c) => ({ content: c.message.content ?? '', refusal: c.message.refusal ?? '', toolCalls: c.message.tool_calls ?? [], finishReason: c.finish_reason }));
}
