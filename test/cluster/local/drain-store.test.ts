import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateFileError } from '../../../src/shared/errors.js';
import { DRAINS_FILE, LocalDrainStore } from '../../../src/cluster/local/drain-store.js';
import { parseStoredDrain } from '../../../src/exporters/drains/definition-schema.js';
import type { DrainDefinition } from '../../../src/exporters/drains/definition.js';
import { DRAIN } from './drain-fixture.js';
import { exporterConfig, makeHarness } from '../../exporters/drains/harness.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));


function writeFile(content: unknown): string {
  const path = join(dir, DRAINS_FILE);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

async function loadError(): Promise<string> {
  try {
    await new LocalDrainStore(dir, parseStoredDrain).load();
  } catch (err) {
    expect(err).toBeInstanceOf(StateFileError);
    return (err as Error).message;
  }
  throw new Error('load() accepted the file');
}

describe('the local drain store (drains.json)', () => {
  it('writes drains with mode 0600 and reads them back equal', async () => {
    const store = new LocalDrainStore(dir, parseStoredDrain);
    await store.put(DRAIN);
    expect(statSync(join(dir, DRAINS_FILE)).mode & 0o777).toBe(0o600);
    expect(await new LocalDrainStore(dir, parseStoredDrain).load()).toEqual([DRAIN]);
    await store.remove(DRAIN.id);
    expect(JSON.parse(readFileSync(join(dir, DRAINS_FILE), 'utf8'))).toEqual({ version: 1, drains: [] });
  });

  it('starts empty without a file', async () => {
    expect(await new LocalDrainStore(dir, parseStoredDrain).load()).toEqual([]);
  });

  it('refuses a file that is not JSON, naming the file', async () => {
    const path = writeFile('{"version": 1, "drains": [');
    expect(await loadError()).toContain(`${path} is not a valid drains file`);
  });

  it('refuses a file of another version or shape', async () => {
    writeFile({ version: 2, drains: [] });
    expect(await loadError()).toContain('version: must be 1');
    writeFile([DRAIN]);
    expect(await loadError()).toContain('(root): must be an object');
  });

  it('names each bad field of a stored drain by its path', async () => {
    const path = writeFile({ version: 1, drains: [DRAIN, { ...DRAIN, id: 'drn_other', delivery: { ...DRAIN.delivery, url: 'ftp://x' }, sampling: [{ environment: 'production', percentage: 150 }] }] });
    const message = await loadError();
    expect(message).toContain(path);
    expect(message).toContain('drains[1].delivery.url: must be an https URL');
    expect(message).toContain('drains[1].sampling[0].percentage: must be a number from 0 to 100');
  });

  it('still reads a drain stored with a path prefix without its leading / or an environment with a space around it, as earlier versions accepted', async () => {
    const stored = { ...DRAIN, sampling: [{ environment: ' production', percentage: 10, path_prefix: 'api' }] };
    writeFile({ version: 1, drains: [stored] });
    expect(await new LocalDrainStore(dir, parseStoredDrain).load()).toEqual([stored]);
  });

  it('refuses two drains with one id', async () => {
    writeFile({ version: 1, drains: [DRAIN, DRAIN] });
    expect(await loadError()).toContain(`drains[1].id: duplicate id ${DRAIN.id}`);
  });

  it('stops the drains exporter from starting, with the error naming the file', async () => {
    const path = writeFile({ version: 1, drains: [{ ...DRAIN, enabled: 'yes' }] });
    const harness = makeHarness(exporterConfig([]), dir);
    await expect(harness.exporter.start(harness.host)).rejects.toThrow(`${path} is not a valid drains file: drains[0].enabled: must be a boolean`);
    await harness.exporter.shutdown();
  });
});
