import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { resourceConfigSchema } from '../../../src/processors/resource/config.js';
import { applyActions, createResourceProcessor } from '../../../src/processors/resource/processor.js';
import { TraceBatch } from '../../../src/otlp/batch.js';
import { makeSdkSpans } from '../../helpers/sdk-spans.js';
import { validationProblems } from '../../helpers/validate.js';

async function run(attributes: unknown, resource: Record<string, string>) {
  const processor = createResourceProcessor(resourceConfigSchema.parse({ attributes }));
  const input = TraceBatch.fromProto(ProtobufTraceSerializer.serializeRequest(makeSdkSpans(resource))!);
  const output = (await processor.process(input))!;
  return { input: input.toModel(), output: output.toModel() };
}

const attrs = (m: Awaited<ReturnType<typeof run>>['output']) =>
  Object.fromEntries((m.resourceSpans[0]?.resource?.attributes ?? []).map((kv) => [kv.key, kv.value]));

describe('resource processor', () => {
  it('stamps a resource holding a string that is not UTF-8, writing U+FFFD for the bad bytes', async () => {
    // resourceSpans { resource { attributes { key: "k", value { string_value: "a", 0xff } } } }
    const w = protobuf.Writer.create().uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).string('k').uint32((2 << 3) | 2).fork().uint32((1 << 3) | 2).bytes(Uint8Array.from([0x61, 0xff]));
    const bytes = w.ldelim().ldelim().ldelim().ldelim().finish();
    const processor = createResourceProcessor(resourceConfigSchema.parse({ attributes: { 'platform.projectId': 'prj_1' } }));
    const output = (await processor.process(TraceBatch.fromProto(bytes)))!;
    expect(attrs(output.toModel())).toEqual({ k: { stringValue: 'a\ufffd' }, 'platform.projectId': { stringValue: 'prj_1' } });
  });

  it('leaves one stamped value where a sender repeated the key, and deletes every copy', () => {
    const repeated = { attributes: [{ key: 'platform.projectId', value: { stringValue: 'stale' } }, { key: 'service.name', value: { stringValue: 'svc' } }, { key: 'platform.projectId', value: { stringValue: 'older' } }] };
    expect(applyActions(repeated, [{ key: 'platform.projectId', value: 'prj_1', action: 'upsert' }]).attributes).toEqual([
      { key: 'platform.projectId', value: { stringValue: 'prj_1' } },
      { key: 'service.name', value: { stringValue: 'svc' } },
    ]);
    expect(applyActions(repeated, [{ key: 'platform.projectId', action: 'delete' }]).attributes).toEqual([{ key: 'service.name', value: { stringValue: 'svc' } }]);
    // insert leaves what is there as it is.
    expect(applyActions(repeated, [{ key: 'platform.projectId', value: 'prj_1', action: 'insert' }]).attributes).toEqual(repeated.attributes);
  });

  it('upserts every attribute of the map form on every resource', async () => {
    const { output } = await run({ 'platform.projectId': 'prj_1', 'platform.deploymentId': 'dpl_9', 'service.name': 'renamed' }, { 'service.name': 'checkout' });
    expect(attrs(output)).toMatchObject({
      'platform.projectId': { stringValue: 'prj_1' },
      'platform.deploymentId': { stringValue: 'dpl_9' },
      'service.name': { stringValue: 'renamed' },
    });
  });

  it('applies the collector list form: insert keeps, update changes only existing, delete removes', async () => {
    const { output } = await run(
      [
        { key: 'service.name', value: 'ignored', action: 'insert' },
        { key: 'missing', value: 'x', action: 'update' },
        { key: 'team', value: 'core', action: 'insert' },
        { key: 'host.name', action: 'delete' },
        { key: 'replicas', value: 3, action: 'upsert' },
      ],
      { 'service.name': 'checkout', 'host.name': 'box' },
    );
    const a = attrs(output);
    expect(a['service.name']).toEqual({ stringValue: 'checkout' });
    expect(a.missing).toBeUndefined();
    expect(a.team).toEqual({ stringValue: 'core' });
    expect(a['host.name']).toBeUndefined();
    expect(a.replicas).toEqual({ intValue: '3' });
  });

  it('stamps numbers as ints while exact and as doubles beyond 2^53', async () => {
    const { output } = await run({ small: 42, edge: Number.MAX_SAFE_INTEGER, big: 1e19, huge: 1e21, ratio: 0.5 }, {});
    expect(attrs(output)).toMatchObject({
      small: { intValue: '42' },
      edge: { intValue: '9007199254740991' },
      big: { doubleValue: 1e19 },
      huge: { doubleValue: 1e21 },
      ratio: { doubleValue: 0.5 },
    });
  });

  it('leaves every span byte-for-byte as it was', async () => {
    const { input, output } = await run({ 'platform.projectId': 'prj_1' }, {});
    expect(output.resourceSpans[0]?.scopeSpans).toEqual(input.resourceSpans[0]?.scopeSpans);
  });

  it('rejects an unknown action naming the key', () => {
    const result = resourceConfigSchema.safeParse({ attributes: [{ key: 'a', value: 'b', action: 'merge' }] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['attributes', 0, 'action']);
    expect(result.error?.issues[0]?.message).toBe('must be one of insert, update, upsert, delete');
  });

  it('says in the config\'s own words what is wrong with attributes of neither form, naming the path', () => {
    const problems = (attributes: unknown) =>
      validationProblems({
        receivers: { otlp: { protocols: { http: {} } } },
        processors: { resource: { attributes } },
        exporters: { debug: {} },
        service: { pipelines: { traces: { receivers: ['otlp'], processors: ['resource'], exporters: ['debug'] } } },
      });
    expect(problems('platform.projectId=prj_1')).toEqual(['processors.resource.attributes: must be a mapping of keys to values, or a list of { key, value, action }']);
    expect(problems(['platform.projectId'])).toEqual(['processors.resource.attributes[0]: must be an object']);
    expect(problems([{ key: 'a', value: 'b', action: 'upsert', foo: 1 }])).toEqual(['processors.resource.attributes[0].foo: unknown key']);
    // As the list form refuses { key: "" }: YAML's `~: x` (a null key) reads as "" too.
    expect(problems({ '': 'x', 'platform.projectId': 'prj_1' })).toEqual(['processors.resource.attributes: an attribute key must not be empty']);
  });
});
