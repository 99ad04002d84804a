// Wire shapes of Amazon Bedrock's Converse and ConverseStream APIs, the fields
// the adapter sends and reads. Blobs (image bytes) travel as base64 in JSON.
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html

export type ConverseImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export interface ConverseToolUse {
  toolUseId: string;
  name: string;
  input: unknown;
}

/** Reasoning of a Claude (or other reasoning) model: signed text, or redacted bytes as base64. */
export type ConverseReasoningContent = { reasoningText: { text: string; signature?: string } } | { redactedContent: string };

/** A prompt-caching checkpoint: everything before it in the request is cached. */
export interface ConverseCachePoint {
  cachePoint: { type: 'default' };
}

/** ToolResultContentBlock: text or a JSON value (images, documents and video too, which nothing here sends). */
export type ConverseToolResultContent = { text: string } | { json: Record<string, unknown> };

export type ConverseContentBlock =
  | { text: string }
  | { image: { format: ConverseImageFormat; source: { bytes: string } } }
  | { toolUse: ConverseToolUse }
  | { toolResult: { toolUseId: string; content: ConverseToolResultContent[]; status?: 'success' | 'error' } }
  | { reasoningContent: ConverseReasoningContent }
  | ConverseCachePoint;

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseContentBlock[];
}

export interface ConverseInferenceConfig {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

export type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ConverseToolConfig {
  tools: Array<{ toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } } | ConverseCachePoint>;
  toolChoice?: ConverseToolChoice;
}

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: Array<{ text: string } | ConverseCachePoint>;
  inferenceConfig?: ConverseInferenceConfig;
  toolConfig?: ConverseToolConfig;
  /**
   * Model-specific fields: Claude's `thinking` and `output_config`, Nova's
   * `reasoningConfig: {type, maxReasoningEffort}`.
   */
  additionalModelRequestFields?: Record<string, unknown>;
  /** JSON pointers of model-specific answer fields to return (Claude's `/delta/stop_sequence`). */
  additionalModelResponseFieldPaths?: string[];
}

/**
 * The model-specific answer fields asked for: Claude's `delta.stop_sequence`
 * (as in its message_delta event) names the stop sequence that ended the
 * answer, whole and streamed.
 */
export interface ConverseAdditionalFields {
  delta?: { stop_sequence?: unknown } | null;
}

export type ConverseStopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | 'malformed_model_output'
  | 'malformed_tool_use'
  | 'model_context_window_exceeded';

export interface ConverseUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/** Response content blocks; others are read past. */
export type ConverseResponseBlock = { text: string } | { toolUse: ConverseToolUse } | { reasoningContent: ConverseReasoningContent };

export interface ConverseResponse {
  output: { message: { role: 'assistant'; content: ConverseResponseBlock[] } };
  stopReason: ConverseStopReason;
  additionalModelResponseFields?: ConverseAdditionalFields;
  usage?: ConverseUsage;
  metrics?: { latencyMs: number };
}

// ConverseStream: each event-stream frame's `:event-type` header names the
// event and its JSON payload is the event's body.
export interface ConverseStreamEvents {
  messageStart: { role: 'assistant' };
  contentBlockStart: { contentBlockIndex: number; start: { toolUse?: { toolUseId: string; name: string } } };
  contentBlockDelta: { contentBlockIndex: number; delta: { text?: string; toolUse?: { input: string }; reasoningContent?: { text?: string; signature?: string; redactedContent?: string } } };
  contentBlockStop: { contentBlockIndex: number };
  messageStop: { stopReason: ConverseStopReason; additionalModelResponseFields?: ConverseAdditionalFields };
  metadata: { usage?: ConverseUsage; metrics?: { latencyMs: number } };
}
