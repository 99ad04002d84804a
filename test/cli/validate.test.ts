// `sluice validate` as a user runs it: the built CLI in a child process.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../../dist/src/cli.js');
let directory: string;

beforeAll(async () => {
  // `npm test` builds first; build here too when run on its own.
  if (!existsSync(CLI)) await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: join(import.meta.dirname, '../..') }).catch(() => undefined);
  directory = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
}, 120_000);

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

const GOOD = `
receivers:
  otlp:
    protocols:
      http: { endpoint: "127.0.0.1:\${env:SLUICE_TEST_PORT:-4318}" }
processors:
  resource:
    attributes: { platform.projectId: prj_cli, platform.deploymentId: dpl_cli }
exporters:
  debug: {}
service:
  pipelines:
    traces:
      receivers: [otlp]
      processors: [resource]
      exporters: [debug]
`;

async function validate(text: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = join(directory, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'validate', '--config', file], { env: { PATH: process.env['PATH'] ?? '', ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env['PATH'] ?? '' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('sluice command line', () => {
  it('prints the usage to stdout for --help, and to stderr with exit 2 when no command is given', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: sluice <command> --config FILE/);
    expect(await cli([])).toEqual({ code: 2, stdout: '', stderr: help.stdout });
  });

  it('refuses a second --config instead of reading only the last one', async () => {
    const file = join(directory, 'twice.yaml');
    writeFileSync(file, GOOD);
    expect(await cli(['validate', '--config', file, '-c', file])).toEqual({ code: 2, stdout: '', stderr: 'validate: --config is given 2 times; sluice reads one config file\n' });
  });

  it('refuses a stray argument instead of ignoring it', async () => {
    const file = join(directory, 'stray.yaml');
    writeFileSync(file, GOOD);
    expect(await cli(['validate', '--config', file, 'other.yaml'])).toEqual({ code: 2, stdout: '', stderr: 'validate: unexpected argument "other.yaml" (the config file goes after --config)\n' });
  });
});

describe('sluice validate', () => {
  it('prints config OK and exits 0 for a good config', async () => {
    expect(await validate(GOOD)).toEqual({ code: 0, stdout: 'config OK\n', stderr: '' });
  });

  it('takes config.example.yaml, as shipped and with no variable set, without a warning', async () => {
    const example = await readFile(join(import.meta.dirname, '../../config.example.yaml'), 'utf8');
    expect(await validate(example)).toEqual({ code: 0, stdout: 'config OK\n', stderr: '' });
  });

  it('exits 1 naming a bad value by its YAML path', async () => {
    const result = await validate(GOOD.replace('debug: {}', 'debug: { colour: red }'));
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['exporters.debug.colour: unknown key']);
  });

  it('prints every problem at once, one per line', async () => {
    const text = GOOD.replace('[debug]', '[debug, otlphttp/missing]').replace('receivers: [otlp]', 'receivers: [otlp, kafka]').replace('service:', 'extra: true\nservice:');
    const result = await validate(text);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'extra: unknown key',
      'service.pipelines.traces.receivers[1]: references receiver "kafka" which is not configured under receivers',
      'service.pipelines.traces.exporters[1]: references exporter "otlphttp/missing" which is not configured under exporters',
    ]);
  });

  it('reports unknown references in the same run as shape problems elsewhere', async () => {
    const text = GOOD.replace('debug: {}', 'debug: { colour: red }').replace('service:', 'service:\n  admin: { endpoint: nowhere }').replace('receivers: [otlp]', 'receivers: [otlp, kafka]');
    const result = await validate(text);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'exporters.debug.colour: unknown key',
      'service.admin.endpoint: must be host:port with a port from 0 to 65535 (e.g. 127.0.0.1:13133)',
      'service.pipelines.traces.receivers[1]: references receiver "kafka" which is not configured under receivers',
    ]);
  });

  it('checks the references of well-formed pipelines beside a malformed one, without calling components unused', async () => {
    const text = GOOD.replace('debug: {}', 'debug: {}\n  debug/other: {}').replace('exporters: [debug]', 'exporters: [debug, otlphttp/missing]\n    traces/broken:\n      receivers: otlp\n      exporters: [debug/other]');
    const result = await validate(text);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'service.pipelines.traces/broken.receivers: must be an array',
      'service.pipelines.traces.exporters[1]: references exporter "otlphttp/missing" which is not configured under exporters',
    ]);
  });

  it('reports a catalog endpoint naming an unknown provider beside a bad gateway value', async () => {
    const gateway = `receivers:
  gateway:
    api_keys: [k]
    max_request_body_size: lots
    providers: { openai: { type: openai, base_url: "https://api.openai.com/v1" } }
    models: [{ id: acme/m, endpoints: [{ provider: nope, model: m }] }]
`;
    const result = await validate(GOOD.replace('receivers:\n', gateway).replace('receivers: [otlp]', 'receivers: [otlp, gateway]'));
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'receivers.gateway.max_request_body_size: must be a size like 4MiB, 512KiB or a byte count',
      'receivers.gateway.models[0].endpoints[0].provider: must name a provider configured under providers (nope is not)',
    ]);
  });

  it('names an unset environment variable and where it is used', async () => {
    const result = await validate(GOOD.replace('debug: {}', 'debug: {}\n  file: { path: "${env:SLUICE_TEST_UNSET}" }').replace('[debug]', '[debug, file]'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('exporters.file.path: environment variable SLUICE_TEST_UNSET is not set');
  });

  it('accepts a component configured but used in no pipeline, with a warning', async () => {
    const result = await validate(GOOD.replace('debug: {}', 'debug: {}\n  debug/spare: {}'));
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('config OK');
    expect(result.stderr.trim()).toBe('warning: exporters.debug/spare: configured but used in no pipeline (it will not be started)');
  });

  it('warns about an otlphttp endpoint with no path, which the collector would have completed with /v1/traces', async () => {
    const result = await validate(GOOD.replace('debug: {}', 'debug: {}\n  otlphttp/base: { endpoint: "https://user:pw@collector.example.com:4318" }\n  otlphttp/full: { endpoint: "https://collector.example.com:4318/v1/traces" }').replace('[debug]', '[debug, otlphttp/base, otlphttp/full]'));
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('config OK');
    expect(result.stderr.trim()).toBe('warning: exporters.otlphttp/base.endpoint: has no path: traces are POSTed to the root path (/) as written, where the collector would add /v1/traces: write the full URL');
  });

  it('warns about a config drain whose url has no path', async () => {
    const result = await validate(`${GOOD.replace('debug: {}', 'drains: {}').replace('[debug]', '[drains]')}drains:\n  - { name: base, url: "https://api.example.com" }\n  - { name: full, url: "https://api.example.com/v1/traces" }\n`);
    expect(result.code).toBe(0);
    expect(result.stderr.trim()).toBe('warning: drains[0].url: has no path: traces are POSTed to the root path (/) as written, where the collector would add /v1/traces: write the full URL');
  });

  it('warns about a pipeline no resource processor stamps with both platform attributes', async () => {
    const result = await validate(GOOD.replace('platform.projectId: prj_cli, ', ''));
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('config OK');
    expect(result.stderr.trim()).toBe('warning: service.pipelines.traces: no resource processor sets platform.projectId and platform.deploymentId: its spans leave without them');
    const without = await validate(GOOD.replace('      processors: [resource]\n', ''));
    expect(without.stderr).toContain('warning: processors.resource: configured but used in no pipeline');
    expect(without.stderr).toContain('warning: service.pipelines.traces: no resource processor sets');
  });

  it('reports a file that cannot be read', async () => {
    const { stderr } = await run(process.execPath, [CLI, 'validate', '--config', join(directory, 'absent.yaml')]).catch((err: unknown) => err as { stderr: string });
    expect(stderr).toMatch(/absent\.yaml: cannot read the config file/);
  });
});
