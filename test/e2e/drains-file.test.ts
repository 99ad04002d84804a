// Issue 9's loose end, end to end: a drains.json that cannot be read back
// whole stops the daemon's start with an error naming the file and the field.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('drains.json on start', () => {
  it('refuses to start on a bad drains.json, naming the file and the bad field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-drains-file-'));
    dirs.push(dir);
    await mkdir(join(dir, 'data'));
    const file = join(dir, 'data', 'drains.json');
    const drain = {
      id: 'drn_abcdefghijklmnop',
      name: 'broken',
      enabled: true,
      createdAt: 1,
      updatedAt: 1,
      delivery: { url: 'ftp://example.com/v1/traces', encoding: 'protobuf', compression: 'gzip', headers: {}, insecure: false },
      sampling: [],
    };
    await writeFile(file, JSON.stringify({ version: 1, drains: [drain] }));
    const started = startDaemon(
      ({ adminPort }) => `
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:0 } } }
exporters:
  drains: {}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
  pipelines:
    traces: { receivers: [otlp], exporters: [drains] }
`,
      { dir },
    );
    await expect(started).rejects.toThrow(/daemon exited with [1-9]/);
    await expect(started).rejects.toThrow(`${file} is not a valid drains file: drains[0].delivery.url: must be an https URL`);
  });
});
