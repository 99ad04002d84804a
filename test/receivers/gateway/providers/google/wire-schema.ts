// The Gemini API's documented generateContent request shape, as the fake checks it.
// https://ai.google.dev/api/generate-content#request-body
import { z } from 'zod';
import { zodProblems, type Seen } from '../shared/fake-upstream.js';

export type Schema = { [key: string]: unknown };

// The OpenAPI subset of Gemini's Schema object: unknown keys are rejected, as Gemini does, and so
// is a node without a type outside a union ("schema didn't specify the schema type field"), an ARRAY
// without items ("items: missing field"), properties on anything but an OBJECT and items on anything
// but an ARRAY ("only allowed for OBJECT type"), and an OBJECT without properties ("properties: should be
// non-empty for OBJECT type").
const schema: z.ZodType<Schema> = z.lazy(() =>
  z
    .strictObject({
      type: z.enum(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT']).optional(),
      format: z.enum(['enum', 'date-time', 'int32', 'int64', 'float', 'double']).optional(),
      description: z.string().optional(),
      nullable: z.boolean().optional(),
      enum: z.array(z.string()).optional(),
      items: schema.optional(),
      properties: z.record(z.string(), schema).optional(),
      required: z.array(z.string()).optional(),
      anyOf: z.array(schema).optional(),
      minItems: z.number().optional(),
      maxItems: z.number().optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
      minLength: z.number().optional(),
      maxLength: z.number().optional(),
      pattern: z.string().optional(),
      propertyOrdering: z.array(z.string()).optional(),
    })
    .refine((node) => node.type !== undefined || node.anyOf !== undefined, 'a schema node needs a type (or anyOf)')
    .refine((node) => node.type !== 'ARRAY' || node.items !== undefined, 'an ARRAY needs items')
    .refine((node) => node.properties === undefined || node.type === 'OBJECT', 'properties: only allowed for OBJECT type')
    .refine((node) => node.type !== 'OBJECT' || Object.keys(node.properties ?? {}).length > 0, 'properties: should be non-empty for OBJECT type')
    .refine((node) => node.items === undefined || node.type === 'ARRAY', 'items: only allowed for ARRAY type'),
);

// JSON Schema in parametersJsonSchema / responseJsonSchema: beside a $ref only $ keywords may be set.
const jsonSchema: z.ZodType<Schema> = z.lazy(() =>
  z.record(z.string(), z.unknown()).superRefine((node, ctx) => {
    const check = (value: unknown, path: string): void => {
      if (Array.isArray(value)) return value.forEach((v, i) => check(v, `${path}.${i}`));
      if (typeof value !== 'object' || value === null) return;
      const object = value as Record<string, unknown>;
      if (typeof object['$ref'] === 'string' && Object.keys(object).some((k) => !k.startsWith('$'))) ctx.addIssue({ code: 'custom', message: `${path}: only $ keywords may be set beside $ref` });
      for (const [k, v] of Object.entries(object)) check(v, `${path}.${k}`);
    };
    check(node, '');
  }),
);

// Gemini refuses any other image type ("MIME type must be image/png, image/jpeg, image/webp, image/heic, or image/heif").
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif'] as const;

const part = z
  .strictObject({
    text: z.string().optional(),
    thought: z.boolean().optional(),
    thoughtSignature: z.union([z.base64(), z.literal('skip_thought_signature_validator')]).optional(),
    inlineData: z.strictObject({ mimeType: z.enum(IMAGE_TYPES), data: z.base64() }).optional(),
    functionCall: z.strictObject({ name: z.string(), args: z.record(z.string(), z.unknown()).optional(), id: z.string().optional() }).optional(),
    functionResponse: z.strictObject({ name: z.string(), response: z.record(z.string(), z.unknown()), id: z.string().optional() }).optional(),
  })
  .refine((p) => [p.text, p.inlineData, p.functionCall, p.functionResponse].filter((v) => v !== undefined).length === 1, 'a part holds exactly one of text, inlineData, functionCall, functionResponse');

export const generateContentRequest = z.strictObject({
  contents: z.array(z.strictObject({ role: z.enum(['user', 'model']), parts: z.array(part).min(1) })).min(1),
  systemInstruction: z.strictObject({ role: z.string().optional(), parts: z.array(z.strictObject({ text: z.string() })).min(1) }).optional(),
  tools: z
    .array(
      z.strictObject({
        functionDeclarations: z.array(
          z
            .strictObject({ name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/), description: z.string().optional(), parameters: schema.optional(), parametersJsonSchema: jsonSchema.optional() })
            .refine((d) => d.parameters === undefined || d.parametersJsonSchema === undefined, 'parameters and parametersJsonSchema are mutually exclusive'),
        ),
      }),
    )
    .optional(),
  toolConfig: z.strictObject({ functionCallingConfig: z.strictObject({ mode: z.enum(['AUTO', 'ANY', 'NONE', 'VALIDATED']), allowedFunctionNames: z.array(z.string()).optional() }) }).optional(),
  generationConfig: z
    .strictObject({
      temperature: z.number().min(0).max(2).optional(),
      topP: z.number().optional(),
      topK: z.number().optional(),
      maxOutputTokens: z.int().positive().optional(),
      stopSequences: z.array(z.string()).max(5).optional(),
      candidateCount: z.int().optional(),
      seed: z.int().optional(),
      presencePenalty: z.number().optional(),
      frequencyPenalty: z.number().optional(),
      responseMimeType: z.enum(['text/plain', 'application/json', 'text/x.enum']).optional(),
      responseModalities: z.array(z.enum(['TEXT', 'IMAGE', 'AUDIO'])).optional(),
      // https://ai.google.dev/gemini-api/docs/image-generation
      imageConfig: z.strictObject({ aspectRatio: z.string().optional(), imageSize: z.string().optional() }).optional(),
      responseSchema: schema.optional(),
      responseJsonSchema: jsonSchema.optional(),
      // https://ai.google.dev/gemini-api/docs/thinking
      thinkingConfig: z.strictObject({ thinkingBudget: z.int().min(-1).max(32_768).optional(), includeThoughts: z.boolean().optional(), thinkingLevel: z.enum(['minimal', 'low', 'medium', 'high']).optional() }).optional(),
      // https://ai.google.dev/api/generate-content#generationconfig: logprobs "only valid if responseLogprobs=True", in [0, 20].
      responseLogprobs: z.boolean().optional(),
      logprobs: z.int().min(0).max(20).optional(),
    })
    .refine((config) => config.logprobs === undefined || config.responseLogprobs === true, 'logprobs is only valid with responseLogprobs: true')
    .optional(),
});

export type GenerateContentRequest = z.output<typeof generateContentRequest>;

export function validateGemini(seen: Seen): string[] {
  const problems: string[] = [];
  if (seen.method !== 'POST' || !/^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent\?alt=sse)$/.test(seen.path)) problems.push(`request line ${seen.method} ${seen.path}`);
  if (seen.headers['x-goog-api-key'] !== 'gm-test-key') problems.push('x-goog-api-key header missing or wrong');
  if (seen.headers['content-type'] !== 'application/json') problems.push('content-type is not application/json');
  problems.push(...zodProblems(generateContentRequest, seen.body, 'body'));
  if (problems.length > 0) return problems;
  const body = generateContentRequest.parse(seen.body);
  body.contents.forEach((content, i) => {
    if (i > 0 && body.contents[i - 1]?.role === content.role) problems.push(`body contents.${i}: two ${content.role} turns in a row`);
    // Function responses answer the previous model turn's calls, by name, one for one.
    const responses = content.parts.flatMap((p) => (p.functionResponse !== undefined ? [p.functionResponse.name] : []));
    if (responses.length === 0) return;
    const calls = body.contents[i - 1]?.parts.flatMap((p) => (p.functionCall !== undefined ? [p.functionCall.name] : [])) ?? [];
    if (responses.join(',') !== calls.join(',')) problems.push(`body contents.${i}: functionResponse names ${responses.join(',')} do not answer calls ${calls.join(',')}`);
    // Gemini 3 matches a functionResponse to its call by id when the calls have one.
    const callIds = body.contents[i - 1]?.parts.flatMap((p) => (p.functionCall?.id !== undefined ? [p.functionCall.id] : [])) ?? [];
    const responseIds = content.parts.flatMap((p) => (p.functionResponse !== undefined ? [p.functionResponse.id ?? '(none)'] : []));
    if (callIds.length > 0 && [...responseIds].sort().join(',') !== [...callIds].sort().join(',')) problems.push(`body contents.${i}: functionResponse.id ${responseIds.join(',')} does not match functionCall.id ${callIds.join(',')}`);
  });
  return problems;
}
