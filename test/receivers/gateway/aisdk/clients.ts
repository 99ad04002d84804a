// The two unmodified AI SDK generations the /v1/ai protocol serves: `ai` 6
// (@ai-sdk/gateway 3.x, spec version 3) and `ai` 7 (installed as `ai7`,
// @ai-sdk/gateway 4.x, spec version 4). The calls these tests make
// (createGateway, generateText, streamText, tool, stepCountIs, Output,
// embed, embedMany, jsonSchema) keep ai 6's signatures in ai 7, so one suite
// drives both; ai 7 is typed through ai 6's declarations for that reason.
import * as ai6 from 'ai';
import * as ai7Module from 'ai7';

export type Ai = typeof ai6;

// ai 7 logs a deprecation for `image` parts, which these tests send on purpose (apps still do).
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

export interface AiClient {
  readonly name: string;
  readonly ai: Ai;
  /** The ai-language-model-specification-version header this client sends. */
  readonly specVersion: '3' | '4';
}

export const aiClients: readonly AiClient[] = [
  { name: 'ai 6', ai: ai6, specVersion: '3' },
  { name: 'ai 7', ai: ai7Module as unknown as Ai, specVersion: '4' },
];
