// One error class for every answer the gateway gives that is not a success;
// it carries the OpenAI error body fields and the status.
import type { ServerResponse } from 'node:http';
import type { OpenAIErrorBody } from '../providers/shared/openai-types.js';

export class GatewayHttpError extends Error {
  readonly code = 'SLUICE_ERR_GATEWAY_HTTP';
  readonly status: number;
  readonly errorType: string;
  readonly errorCode: string | null;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, message: string, options: { type?: string; code?: string | null; param?: string | null; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'GatewayHttpError';
    this.status = status;
    this.errorType = options.type ?? typeForStatus(status);
    this.errorCode = options.code ?? null;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  withHeaders(headers: Record<string, string>): GatewayHttpError {
    return new GatewayHttpError(this.status, this.message, { type: this.errorType, code: this.errorCode, param: this.param, headers: { ...this.headers, ...headers } });
  }

  body(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.errorType, param: this.param, code: this.errorCode } };
  }

  /** error.type on spans: the most specific low-cardinality name we have. */
  get spanErrorType(): string {
    return this.errorCode ?? this.errorType;
  }
}

function typeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function sendJson(res: ServerResponse, status: number, body: string, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Answers with `error` in the body format of the client's protocol (nothing if headers went out). */
export function sendError(res: ServerResponse, error: GatewayHttpError, format: { body(error: GatewayHttpError): string }): void {
  if (res.headersSent) return;
  // A body left unread (a 401 or 413 on the headers) would have to be read
  // and dropped before the connection could serve another request: closing
  // it is cheaper and bounds what a refused client can make the gateway read.
  if (res.req.complete === false) res.shouldKeepAlive = false;
  sendJson(res, error.status, format.body(error), error.headers);
}

/** OpenAI's error body, which the OpenAI-shaped routes (chat, models, embeddings) answer with. */
export const openaiErrors = {
  body: function openaiErrorBody(error: GatewayHttpError): string {
    return JSON.stringify(error.body());
  },
  // No [DONE] after it: clients (the openai SDK among them) raise it as an APIError.
  streamEvent: function openaiErrorEvent(error: GatewayHttpError): string {
    return `data: ${JSON.stringify(error.body())}\n\n`;
  },
};
