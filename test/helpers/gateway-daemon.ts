// The built daemon running just the gateway receiver on a free port, its spans
// going to one exporter: what the e2e gateway tests start against a fake upstream.
import { freePort, startDaemon, type RunningDaemon } from './daemon.js';

export interface GatewayDaemonOptions {
  /** Where the spans go: a file exporter at `<dir>/traces.jsonl` (default) or `debug`. */
  readonly exporter?: 'file' | 'debug';
  /** More `service:` settings, each line indented by two spaces (e.g. `cluster:`). */
  readonly service?: string;
  readonly env?: Record<string, string>;
  /** A directory to run in and keep (a restart on the same storage); default: a new one, removed at cleanup. */
  readonly dir?: string;
}

export interface RunningGateway extends RunningDaemon {
  /** The gateway's port on 127.0.0.1. */
  readonly port: number;
}

/** Starts the daemon; `settings` are the gateway receiver's lines after `endpoint`, indented by four spaces. */
export async function startGatewayDaemon(settings: string, options: GatewayDaemonOptions = {}): Promise<RunningGateway> {
  const port = await freePort();
  const exporter = options.exporter ?? 'file';
  const service = options.service === undefined ? '' : `${options.service.replace(/^\n/, '').trimEnd()}\n`;
  const daemon = await startDaemon(
    ({ dir, adminPort }) => `
receivers:
  gateway:
    endpoint: 127.0.0.1:${port}
${settings.replace(/^\n/, '').trimEnd()}
exporters:
  ${exporter === 'file' ? `file: { path: ${dir}/traces.jsonl }` : 'debug: {}'}
service:
  storage: { directory: ${dir}/data }
  admin: { endpoint: 127.0.0.1:${adminPort} }
${service}  pipelines:
    traces: { receivers: [gateway], exporters: [${exporter}] }
`,
    { ...(options.env === undefined ? {} : { env: options.env }), ...(options.dir === undefined ? {} : { dir: options.dir }) },
  );
  return { ...daemon, port };
}
