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
  it('stamps a resource holding a string that is not UTF-8, which decoders read with U+FFFD for the bad bytes', async () => {
    // resourceSpans { resource { attributes { key: "k", value { string_value: "a", 0xff } } } }
    const w = protobuf.Writer.create().uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).string('k').uint32((2 << 3) | 2).fork().uint32((1 << 3) | 2).bytes(Uint8Array.from([0x61, 0xff]));
    const bytes = w.ldelim().ldelim().ldelim().ldelim().finish();
    const processor = createResourceProcessor(resourceConfigSchema.parse({ attributes: { 'platform.projectId': 'prj_1' } }));
    const output = (await processor.process(TraceBatch.fromProto(bytes)))!;
    expect(attrs(output.toModel())).toEqual({ k: { stringValue: 'a\ufffd' }, 'platform.projectId': { stringValue: 'prj_1' } });
  });

  it('keeps every byte of a resource but the attributes it stamps: fields it does not know, and strings that are not UTF-8, stay as sent', async () => {
    const field = (n: number, content: Uint8Array) => protobuf.Writer.create().uint32((n << 3) | 2).bytes(content).finish();
    const text = (s: string) => Buffer.from(s);
    const attribute = (key: string, value: Uint8Array | undefined) =>
      field(1, Buffer.concat([field(1, text(key)), ...(value === undefined ? [] : [field(2, value)])]));
    const stringValue = (bytes: Uint8Array) => field(1, bytes);
    const sent = [
      attribute('service.name', stringValue(text('svc'))),
      attribute('platform.projectId', stringValue(text('stale'))),
      attribute('bad.utf8', stringValue(Uint8Array.from([0x61, 0xff, 0x62]))),
      attribute('no.value', undefined),
      Uint8Array.from([0x10, 0x07]), // dropped_attributes_count: 7
      field(3, field(1, text('service'))), // entity_refs, a Resource field of OTLP 1.7
    ];
    const request = field(1, field(1, Buffer.concat(sent)));
    const processor = createResourceProcessor(resourceConfigSchema.parse({ attributes: { 'platform.projectId': 'prj_1', 'platform.deploymentId': 'dpl_1' } }));
    const output = (await processor.process(TraceBatch.fromProto(request)))!;
    const index = output.wire();
    const range = index.resourceSpans[0]!.resource!;
    const stamped = [sent[0]!, attribute('platform.projectId', stringValue(text('prj_1'))), ...sent.slice(2), attribute('platform.deploymentId', stringValue(text('dpl_1')))];
    expect(Buffer.from(index.buf.subarray(range[0], range[1])).toString('hex')).toBe(Buffer.concat(stamped).toString('hex'));
  });

  it('leaves one stamped value where a sender repeated the key, and deletes every copy', () => {
    const repeated = [{ key: 'platform.projectId', value: { stringValue: 'stale' } }, { key: 'service.name', value: { stringValue: 'svc' } }, { key: 'platform.projectId', value: { stringValue: 'older' } }];
    const entry = (key: string, value: unknown) => ({ key, value: { stringValue: String(value) } });
    expect(applyActions(repeated, [{ key: 'platform.projectId', value: 'prj_1', action: 'upsert' }], entry)).toEqual([
      { key: 'platform.projectId', value: { stringValue: 'prj_1' } },
      { key: 'service.name', value: { stringValue: 'svc' } },
    ]);
    expect(applyActions(repeated, [{ key: 'platform.projectId', action: 'delete' }], entry)).toEqual([{ key: 'service.name', value: { stringValue: 'svc' } }]);
    // insert leaves what is there as it is.
    expect(applyActions(repeated, [{ key: 'platform.projectId', value: 'prj_1', action: 'insert' }], entry)).toEqual(repeated);
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
