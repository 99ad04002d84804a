// Wire shapes of the Gemini API's generateContent and streamGenerateContent
// (v1beta), the fields the adapter sends and reads.
// https://ai.google.dev/api/generate-content

export interface GeminiFunctionCall {
  name: string;
  args?: Record<string, unknown>;
  id?: string;
}

/** One part; a part carries exactly one of text, inlineData, functionCall, functionResponse. */
export interface GeminiPart {
  text?: string;
  /** True on a part that is the model's reasoning summary, not its answer. */
  thought?: boolean;
  /** Opaque signature of the model's reasoning; must be sent back on the same part. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  /** JSON Schema instead of `parameters` (one or the other), for what the OpenAPI subset cannot say. */
  parametersJsonSchema?: Record<string, unknown>;
}

export type GeminiCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: Record<string, unknown>;
  /** JSON Schema instead of `responseSchema` (one or the other). */
  responseJsonSchema?: Record<string, unknown>;
  /** Gemini 2.5+: a thinking budget in tokens (0 turns thinking off), and whether thought summaries come back. */
  thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean };
  /** Whether each candidate's logprobsResult comes back. */
  responseLogprobs?: boolean;
  /** With responseLogprobs: how many top candidates each decoding step lists (0 to 20). */
  logprobs?: number;
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: GeminiCallingMode; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
}

export type GeminiFinishReason =
  | 'FINISH_REASON_UNSPECIFIED'
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'LANGUAGE'
  | 'OTHER'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'MALFORMED_FUNCTION_CALL'
  | 'IMAGE_SAFETY'
  | 'IMAGE_PROHIBITED_CONTENT'
  | 'IMAGE_RECITATION'
  | 'IMAGE_OTHER'
  | 'NO_IMAGE'
  | 'UNEXPECTED_TOOL_CALL'
  | 'TOO_MANY_TOOL_CALLS'
  | 'MISSING_THOUGHT_SIGNATURE'
  | 'MALFORMED_RESPONSE';

/** A token and its log probability (proto3 JSON leaves out a 0 or an empty token). */
export interface GeminiLogprobsCandidate {
  token?: string;
  tokenId?: number;
  logProbability?: number;
}

/** One entry per decoding step in each list; a chosen token may be missing from its step's topCandidates. */
export interface GeminiLogprobsResult {
  chosenCandidates?: GeminiLogprobsCandidate[];
  topCandidates?: Array<{ candidates?: GeminiLogprobsCandidate[] }>;
  logProbabilitySum?: number;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: GeminiFinishReason;
  finishMessage?: string;
  index?: number;
  /** With responseLogprobs: the tokens of this candidate (of this event's parts, when streamed). */
  logprobsResult?: GeminiLogprobsResult;
  avgLogprobs?: number;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** google.rpc.Status inside `{"error": ...}`. */
export interface GeminiError {
  code?: number;
  message?: string;
  status?: string;
  /** ErrorInfo (`reason`), RetryInfo (`retryDelay`, a protobuf Duration such as "37s"), ... */
  details?: Array<{ '@type'?: string; reason?: string; retryDelay?: string }>;
}
