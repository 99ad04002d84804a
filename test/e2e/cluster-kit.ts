// Three daemons sharing one Redis, as a fleet of sidecars would: each with
// its own OTLP port, admin port and storage directory.
import { randomBytes } from 'node:crypto';
import type { Span } from '../../src/otlp/model.js';
import { encodeRequest } from '../../src/otlp/proto-codec.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon.js';

export const ADMIN_KEY = 'cluster-admin-key';

export interface Member {
  readonly name: string;
  readonly daemon: RunningDaemon;
  readonly otlpUrl: string;
  readonly admin: string;
}

export interface FleetOptions {
  readonly redisUrl: string;
  readonly keyPrefix: string;
  /** YAML for the top-level `drains:` list (config drains), indented two spaces. */
  readonly drainsYaml?: string;
  readonly decisionWait?: string;
}

export async function startMember(name: string, options: FleetOptions, dir?: string): Promise<Member> {
  const otlpPort = await freePort();
  const daemon = await startDaemon(
    ({ dir: tmp, adminPort }) => `
receivers:
  otlp:
    protocols:
      http: { endpoint: 127.0.0.1:${otlpPort} }
exporters:
  drains: { decision_wait: ${options.decisionWait ?? '2s'}, sending_queue: { flush_timeout: 50ms }, retry_on_failure: { initial_interval: 100ms, max_interval: 500ms } }
${options.drainsYaml === undefined ? '' : `drains:\n${options.drainsYaml}`}
service:
  storage: { directory: ${tmp}/data }
  admin: { endpoint: 127.0.0.1:${adminPort}, api_key: ${ADMIN_KEY} }
  cluster:
    redis: { url: "${options.redisUrl}", key_prefix: "${options.keyPrefix}", timeout: 500ms }
    instance_id: ${name}
  pipelines:
    traces: { receivers: [otlp], exporters: [drains] }
`,
    dir === undefined ? {} : { dir },
  );
  return { name, daemon, otlpUrl: `http://127.0.0.1:${otlpPort}/v1/traces`, admin: `http://127.0.0.1:${daemon.adminPort}` };
}

export async function startFleet(options: FleetOptions): Promise<Member[]> {
  return Promise.all(['a', 'b', 'c'].map((name) => startMember(name, options)));
}

export async function adminCall(member: Member, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${member.admin}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

export async function drainIds(member: Member): Promise<string[]> {
  const { json } = await adminCall(member, 'GET', '/v1/drains');
  return ((json['drains'] ?? []) as Array<{ id: string; source: string }>).filter((d) => d.source === 'api').map((d) => d.id);
}

export interface TraceSpans {
  readonly traceId: string;
  readonly path: string;
  readonly root: Span;
  readonly children: readonly Span[];
}

export function makeTrace(path: string, children: number): TraceSpans {
  const traceId = randomBytes(16).toString('hex');
  const start = BigInt(Date.now()) * 1_000_000n;
  const root: Span = {
    traceId,
    spanId: randomBytes(8).toString('hex'),
    name: `GET ${path}`,
    kind: 2,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + 5_000_000n).toString(),
    attributes: [{ key: 'url.path', value: { stringValue: path } }],
    status: { code: 1 },
  };
  const kids = Array.from({ length: children }, (_, i): Span => ({
    traceId,
    spanId: randomBytes(8).toString('hex'),
    parentSpanId: root.spanId,
    name: `work ${i}`,
    kind: 1,
    startTimeUnixNano: (start + 1_000n).toString(),
    endTimeUnixNano: (start + 2_000n).toString(),
    attributes: [],
    status: { code: 1 },
  }));
  return { traceId, path, root, children: kids };
}

/** One OTLP/protobuf request of these spans from a production deployment. */
export function requestOf(spans: readonly Span[], service = 'shop'): Uint8Array {
  return encodeRequest({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: service } },
            { key: 'deployment.environment.name', value: { stringValue: 'production' } },
          ],
        },
        scopeSpans: [{ spans: [...spans] }],
      },
    ],
  });
}

/** POSTs; resolves with the HTTP status, 0 when the connection failed. */
export async function send(url: string, body: Uint8Array): Promise<number> {
  try {
    const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf' } });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

export async function metric(member: Member, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${member.admin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
