import { describe, expect, it } from 'vitest';
import { meetsOpenAiStrict } from '../../../../src/receivers/gateway/messages/strict-schema.js';

const closed = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });

describe('meetsOpenAiStrict', () => {
  it('takes a schema whose every object is closed with all its properties required, through items, anyOf and $defs', () => {
    const schema = { ...closed({ tags: { type: 'array', items: closed({ name: { type: 'string' } }) }, where: { anyOf: [{ $ref: '#/$defs/place' }, { type: 'null' }] } }), $defs: { place: closed({ city: { type: 'string' } }) } };
    expect(meetsOpenAiStrict(schema)).toBe(true);
  });

  it('refuses an object left open or with an optional property, however deep', () => {
    expect(meetsOpenAiStrict({ type: 'object', properties: {} })).toBe(false);
    expect(meetsOpenAiStrict({ ...closed({ a: { type: 'string' } }), required: [] })).toBe(false);
    expect(meetsOpenAiStrict(closed({ list: { type: 'array', items: { type: 'object', properties: { b: { type: 'string' } }, required: ['b'] } } }))).toBe(false);
    expect(meetsOpenAiStrict({ ...closed({ where: { $ref: '#/$defs/place' } }), $defs: { place: { type: 'object', properties: { city: { type: 'string' } } } } })).toBe(false);
  });

  it('refuses the composition keywords OpenAI has no strict mode for, however deep', () => {
    for (const keyword of ['allOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas']) {
      expect(meetsOpenAiStrict(closed({ a: { type: 'string', [keyword]: keyword === 'allOf' ? [{ type: 'string' }] : {} } }))).toBe(false);
    }
    expect(meetsOpenAiStrict(closed({ a: { anyOf: [{ type: 'string' }, { type: 'null' }] } }))).toBe(true);
  });

  it('reads enum, const and default values as data, not schemas', () => {
    expect(meetsOpenAiStrict(closed({ mode: { ...closed({}), default: { properties: { x: 1 } }, enum: [{ type: 'object' }] } }))).toBe(true);
  });
});
