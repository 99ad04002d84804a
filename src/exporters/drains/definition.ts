// One drain, whichever way it was defined (YAML or API), as the exporter runs it.
import { createHash, randomBytes } from 'node:crypto';
import type { SamplingRule } from '../../processors/sampling/rules.js';
import type { DrainConfig } from './config.js';

export type DrainSource = 'config' | 'api';
export type Encoding = 'json' | 'protobuf';
export type Compression = 'gzip' | 'none';

export interface DrainDelivery {
  readonly url: string;
  readonly encoding: Encoding;
  readonly compression: Compression;
  readonly headers: Readonly<Record<string, string>>;
  readonly secret?: string;
  /** PEM text (API drains). */
  readonly ca?: string;
  /** A PEM file read when the drain starts (YAML drains). */
  readonly caFile?: string;
  readonly insecure: boolean;
}

export interface DrainDefinition {
  readonly id: string;
  readonly name: string;
  readonly source: DrainSource;
  readonly enabled: boolean;
  /** ms since the epoch */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly delivery: DrainDelivery;
  readonly sampling: readonly SamplingRule[];
  readonly queue?: { readonly maxSizeBytes?: number; readonly onFull?: 'drop' | 'refuse' };
}

export function newDrainId(): string {
  return `drn_${randomBytes(12).toString('base64url')}`;
}

/** Config drains keep their id (and so their queue directory) across restarts. */
export function configDrainId(name: string): string {
  return `drn_cfg_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
}

export function definitionFromConfig(drain: DrainConfig, loadedAt: number): DrainDefinition {
  const delivery: DrainDelivery = {
    url: drain.url,
    encoding: drain.format,
    compression: drain.compression,
    headers: drain.headers,
    insecure: drain.insecure,
    ...(drain.secret === undefined || drain.secret === '' ? {} : { secret: drain.secret }),
    ...(drain.tls === undefined ? {} : { caFile: drain.tls.ca_file }),
  };
  const override = drain.sending_queue;
  const queue = override === undefined ? undefined : {
    ...(override.max_size === undefined ? {} : { maxSizeBytes: override.max_size }),
    ...(override.on_full === undefined ? {} : { onFull: override.on_full }),
  };
  return {
    id: configDrainId(drain.name),
    name: drain.name,
    source: 'config',
    enabled: true,
    createdAt: loadedAt,
    updatedAt: loadedAt,
    delivery,
    sampling: drain.sampling,
    ...(queue === undefined ? {} : { queue }),
  };
}

/** JSON with keys sorted, so two equal definitions read back from different places compare equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, function sortKeys(_key, v: unknown) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

export function sameDefinition(a: DrainDefinition, b: DrainDefinition): boolean {
  return canonical(a) === canonical(b);
}
