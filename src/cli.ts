#!/usr/bin/env node
// `sluice run|validate --config FILE`. A thin entry point: parse arguments,
// load the config, hand over to Service. The `sluice` command (sluice.cts)
// sizes libuv's thread pool first, then loads this module.
import './core/young-generation.js';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { builtinRegistry } from './components.js';
import { loadConfigFile } from './config/load.js';
import { UNSTAMPED_WARNING } from './config/platform-check.js';
import { ConfigError, errorMessage } from './shared/errors.js';
import { batchHelperThreadsLogged } from './core/helper-threads.js';
import { createLogger } from './core/logger.js';
import { Service } from './service.js';

const USAGE = `Usage: sluice <command> --config FILE

Commands:
  run        run the daemon (SIGHUP reloads the config, SIGTERM/SIGINT stop it)
  validate   check a config: prints "config OK", or every problem and exits 1

Options:
  -c, --config FILE   the YAML config file
  -v, --version       print the version
  -h, --help          print this help
`;

function readVersion(): string {
  // Two levels up from dist/src/cli.js, one from src/cli.ts.
  for (const relative of ['../../package.json', '../package.json']) {
    try {
      const pkg: unknown = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8'));
      if (pkg !== null && typeof pkg === 'object' && 'name' in pkg && pkg.name === 'sluice' && 'version' in pkg && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not there; try the next location
    }
  }
  return '0.0.0';
}

async function validate(file: string): Promise<number> {
  try {
    const config = await loadConfigFile(file, { registry: builtinRegistry() });
    for (const component of config.unused) process.stderr.write(`warning: ${component}: configured but used in no pipeline (it will not be started)\n`);
    for (const pipeline of config.unstamped) process.stderr.write(`warning: service.pipelines.${pipeline}: ${UNSTAMPED_WARNING}\n`);
    for (const warning of config.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write('config OK\n');
    return 0;
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems : [errorMessage(err)];
    process.stderr.write(`${problems.join('\n')}\n`);
    return 1;
  }
}

async function run(file: string, version: string): Promise<void> {
  const logger = createLogger();
  const registry = builtinRegistry();
  // In place before the config is read (a SIGHUP left unhandled ends the
  // process). One that comes before the start is under way reloads once the
  // start is done, as the file may have been read before it changed.
  let running: Service | undefined;
  let reloadWanted = false;
  function reload(): void {
    if (running === undefined) {
      reloadWanted = true;
      return;
    }
    if (stopping) {
      logger.info({ file }, 'SIGHUP while stopping: not reloading');
      return;
    }
    logger.info({ file }, 'SIGHUP: reloading config');
    void running.reload(() => loadConfigFile(file, { registry })).catch(function reloadFailed(err: unknown) {
      logger.fatal({ err: errorMessage(err) }, 'reload failed and the previous config could not be restored');
      process.exit(1);
    });
  }
  process.on('SIGHUP', reload);

  // In place before the config is read too: a stop that comes meanwhile (a
  // slow disk, a busy machine) exits 0 as any stop does, rather than the
  // signal killing the process.
  let stopping = false;
  function stop(signal: NodeJS.Signals): void {
    if (stopping) {
      logger.warn({ signal }, 'second signal while stopping: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    // Not started yet: nothing is listening or holds data.
    if (running === undefined) process.exit(0);
    running.shutdown().then(
      function stopped() {
        process.exit(0);
      },
      function failedToStop(err: unknown) {
        logger.fatal({ err: errorMessage(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  }
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  let config;
  try {
    config = await loadConfigFile(file, { registry });
  } catch (err) {
    logger.fatal({ problems: err instanceof ConfigError ? err.problems : [errorMessage(err)] }, 'invalid config');
    process.exit(1);
  }
  const service = new Service({ logger, version });

  // The service runs its start and reloads one at a time, in the order asked.
  const starting = service.start(config);
  running = service;
  if (reloadWanted) reload();
  try {
    await starting;
  } catch (err) {
    logger.fatal({ err: errorMessage(err) }, 'failed to start');
    await service.shutdown();
    process.exit(1);
  }
  // Every helper thread exists by now (the exporters opened their files).
  await batchHelperThreadsLogged(logger);
}

async function main(argv: string[]): Promise<number | undefined> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c', multiple: true },
        version: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`${errorMessage(err)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const version = readVersion();
  if (values.version === true) {
    process.stdout.write(`sluice ${version}\n`);
    return 0;
  }
  const command = positionals[0];
  if (values.help === true || command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  // Misuse: the usage goes to stderr, as every error does.
  if (command === undefined) {
    process.stderr.write(USAGE);
    return 2;
  }
  if (command !== 'run' && command !== 'validate') {
    process.stderr.write(`unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  if (positionals.length > 1) {
    process.stderr.write(`${command}: unexpected argument "${positionals[1]}" (the config file goes after --config)\n`);
    return 2;
  }
  const [file, ...more] = values.config ?? [];
  if (file === undefined) {
    process.stderr.write(`${command}: --config FILE is required\n`);
    return 2;
  }
  // The collector merges several --config files; Sluice reads one, and must not quietly drop the others.
  if (more.length > 0) {
    process.stderr.write(`${command}: --config is given ${more.length + 1} times; sluice reads one config file\n`);
    return 2;
  }
  if (command === 'validate') return validate(file);
  await run(file, version);
  return undefined;
}

main(process.argv.slice(2)).then(
  function done(code) {
    if (code !== undefined) process.exitCode = code;
  },
  function crashed(err: unknown) {
    process.stderr.write(`${errorMessage(err)}\n`);
    process.exitCode = 1;
  },
);
