// The API shapes the console reads (DESIGN section 6 and GET /v1/stats), as the
// browser sees them: written out here because the server modules behind them
// (src/admin/stats/view.ts, src/admin/drains/convert.ts) import Node types the
// browser bundle cannot type-check against. The e2e test holds them together.
export interface RuleBody {
  type?: 'head_sampling';
  env: string;
  rate: number;
  requestPath?: string;
}

export interface DrainView {
  id: string;
  name: string;
  source: 'config' | 'api';
  status: 'enabled' | 'disabled' | 'errored';
  createdAt: number;
  updatedAt: number;
  delivery: {
    endpoint: { traces: string };
    encoding: 'proto' | 'json';
    compression: 'gzip' | 'none';
    headers: string[];
    secret: boolean;
    insecure: boolean;
    tls: { ca: boolean };
  };
  sampling: RuleBody[];
  deliveries: {
    succeeded: number;
    failed: number;
    spansSent: number;
    spansDropped: Record<string, number>;
    lastSuccessAt: number | null;
    lastFailureAt: number | null;
    lastError: string | null;
  };
  error?: string;
}

export interface TestResult {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  error?: string;
}

export interface QueueView {
  records: number;
  bytes: number;
  capacityBytes: number;
}

export interface ExporterStats {
  exporter: string;
  sent: number;
  failed: number;
  retries: number;
  dropped: number;
  droppedByReason: Record<string, number>;
  queue: QueueView | null;
}

export interface DrainStats extends Omit<ExporterStats, 'exporter'> {
  id: string;
  pendingQueue: QueueView | null;
}

export interface Stats {
  sampledAt: number;
  intervalMs: number;
  windowMs: number;
  receivers: Array<{
    receiver: string;
    transport: string;
    accepted: number;
    refused: number;
    refusedByReason: Record<string, number>;
    refusedRequests: number;
    refusedRequestsByReason: Record<string, number>;
  }>;
  exporters: ExporterStats[];
  drains: DrainStats[];
  gateway: {
    catalogs: Array<{
      receiver: string;
      endpoint: string;
      providers: Array<{ slug: string; type: string }>;
      models: Array<{ id: string; name: string | null; endpoints: Array<{ provider: string; model: string; pricing: Record<string, string> }>; pricing: Record<string, string> }>;
      keys: Array<{ name: string; requestsPerMinute: number | null; tokensPerMinute: number | null; budget: { usd: number; period: string } | null }>;
    }>;
    providers: Array<{ receiver: string; provider: string; attempts: number; failures: number; failuresByType: Record<string, number>; latencyMs: { p50: number | null; p99: number | null } }>;
    keys: Array<{ key: string; tokens: number; tokensByType: Record<string, number>; costUsd: number }>;
    usage: Array<{ name: string; day: string; today: { requests: number; tokens: number; costUsd: number }; budget: { usd: number; period: string; spentUsd: number } | null }>;
  };
  series: Array<{ at: number; acceptedPerSecond: number; sentPerSecond: number }>;
}
