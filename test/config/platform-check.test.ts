// Which pipelines `validate` warns leave without platform.projectId and platform.deploymentId.
import { describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../src/components.js';
import { parseConfigText } from '../../src/config/load.js';

function unstamped(processors: string, lists: { a: string; b: string }): readonly string[] {
  const text = `
receivers:
  otlp: { protocols: { http: { endpoint: "127.0.0.1:0" } } }
processors:
${processors}
exporters:
  debug: {}
service:
  pipelines:
    traces/a: { receivers: [otlp], processors: ${lists.a}, exporters: [debug] }
    traces/b: { receivers: [otlp], processors: ${lists.b}, exporters: [debug] }
`;
  return parseConfigText(text, { registry: builtinRegistry(), env: {} }).unstamped;
}

describe('platform attribute check', () => {
  const both = '  resource:\n    attributes: { platform.projectId: prj_1, platform.deploymentId: dpl_1 }';

  it('names only the pipelines no resource processor stamps', () => {
    expect(unstamped(`${both}\n  sampling: {}`, { a: '[resource]', b: '[sampling]' })).toEqual(['traces/b']);
  });

  it('counts keys set by several resource processors together, in order, and a later delete undoes one', () => {
    const split = [
      '  resource/project:\n    attributes: { platform.projectId: prj_1 }',
      '  resource/deployment:\n    attributes: [{ key: platform.deploymentId, value: dpl_1, action: insert }]',
      '  resource/strip:\n    attributes: [{ key: platform.projectId, action: delete }]',
    ].join('\n');
    expect(unstamped(split, { a: '[resource/project, resource/deployment]', b: '[resource/project, resource/deployment, resource/strip]' })).toEqual(['traces/b']);
  });

  it('does not count an update, which sets a key only where it is already present', () => {
    const update = '  resource:\n    attributes: [{ key: platform.projectId, value: prj_1, action: update }, { key: platform.deploymentId, value: dpl_1, action: upsert }]';
    expect(unstamped(update, { a: '[resource]', b: '[]' })).toEqual(['traces/a', 'traces/b']);
  });

  it('does not count an empty value (a variable set to nothing), which stamps no id at all', () => {
    const empty = '  resource:\n    attributes: { platform.projectId: prj_1, platform.deploymentId: "${env:DEPLOYMENT_ID:-}" }';
    expect(unstamped(empty, { a: '[resource]', b: '[]' })).toEqual(['traces/a', 'traces/b']);
  });
});
