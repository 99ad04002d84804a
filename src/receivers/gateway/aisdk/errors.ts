// Errors in the body the AI SDK's gateway client parses:
// {"error":{"message","type","param","code"}}. The client picks its error
// class by `type` alone (GatewayAuthenticationError, GatewayModelNotFoundError
// with param.modelId, GatewayRateLimitError, GatewayInvalidRequestError,
// GatewayFailedDependencyError, GatewayInternalServerError); the status only
// decides its retry. `generationId` beside it is the request's, as in the
// x-sluice-generation-id header.
import type { GatewayHttpError } from '../core/http-error.js';
import type { ErrorFormat } from '../core/protocol.js';

export interface AiSdkErrorBody {
  message: string;
  type: string;
  param: unknown;
  code: string | null;
}

export function aiSdkErrorType(error: GatewayHttpError): string {
  if (error.errorCode === 'model_not_found') return 'model_not_found';
  const status = error.status;
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'forbidden';
  if (status === 424) return 'failed_dependency';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'internal_server_error';
  return 'invalid_request_error';
}

export function aiSdkError(error: GatewayHttpError): AiSdkErrorBody {
  const type = aiSdkErrorType(error);
  // The model-not-found class reads the model id from param.modelId.
  const param = type === 'model_not_found' ? { modelId: error.param } : error.param;
  return { message: error.message, type, param, code: error.errorCode };
}

/** The stream part that ends a failed stream; statusCode lets ai 7 judge whether a streamRetries retry may help (ai 6 passes the object through). */
export function aiSdkErrorPart(error: GatewayHttpError): string {
  const body = aiSdkError(error);
  return `data: ${JSON.stringify({ type: 'error', error: { message: body.message, type: body.type, code: body.code, statusCode: error.status } })}\n\n`;
}

export const aiSdkErrors: ErrorFormat = {
  // The client reads the generation id beside the error into its error's generationId (and its message).
  body: function aiSdkErrorBody(error) {
    const generationId = error.headers['x-sluice-generation-id'];
    return JSON.stringify(generationId === undefined ? { error: aiSdkError(error) } : { error: aiSdkError(error), generationId });
  },
  streamEvent: aiSdkErrorPart,
};
