// SigV4 signing of Bedrock runtime requests (service `bedrock`), with the
// credentials from the provider config or, per request, from the standard
// AWS environment variables (so rotated session credentials are picked up).
import { ProviderNotConfiguredError } from '../shared/types.js';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { BedrockProviderConfig } from './config.js';

export const SIGNING_SERVICE = 'bedrock';

export class MissingCredentialsError extends ProviderNotConfiguredError {}

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

function credentialsOf(config: BedrockProviderConfig): Credentials {
  const env = process.env;
  const accessKeyId = config.access_key_id ?? env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = config.secret_access_key ?? (config.access_key_id === undefined ? env['AWS_SECRET_ACCESS_KEY'] : undefined);
  if (accessKeyId === undefined || accessKeyId === '' || secretAccessKey === undefined || secretAccessKey === '') {
    throw new MissingCredentialsError('The bedrock provider has no AWS credentials: set access_key_id and secret_access_key, api_key, AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.');
  }
  const sessionToken = config.access_key_id !== undefined ? config.session_token : env['AWS_SESSION_TOKEN'];
  return sessionToken === undefined || sessionToken === '' ? { accessKeyId, secretAccessKey } : { accessKeyId, secretAccessKey, sessionToken };
}

// One signer per provider config object: the config is normalized once and never changes.
const signers = new WeakMap<BedrockProviderConfig, SignatureV4>();

function signerFor(config: BedrockProviderConfig): SignatureV4 {
  let signer = signers.get(config);
  if (signer === undefined) {
    signer = new SignatureV4({ service: SIGNING_SERVICE, region: config.region, sha256: Sha256, credentials: async () => credentialsOf(config) });
    signers.set(config, signer);
  }
  return signer;
}

/**
 * A Bedrock API key, sent as a Bearer token instead of a signature: `api_key`,
 * else (without configured access keys) AWS_BEARER_TOKEN_BEDROCK, the
 * variable AWS's SDKs take one from, read per request as the other AWS_* are.
 */
function bearerTokenOf(config: BedrockProviderConfig): string | undefined {
  if (config.api_key !== undefined) return config.api_key;
  const token = config.access_key_id === undefined ? process.env['AWS_BEARER_TOKEN_BEDROCK'] : undefined;
  return token === '' ? undefined : token;
}

/** The headers to send a call with: `headers` plus a Bearer token (a Bedrock API key) or a SigV4 signature. */
export async function authorize(config: BedrockProviderConfig, url: URL, headers: Record<string, string>, body: string): Promise<Record<string, string>> {
  const token = bearerTokenOf(config);
  return token !== undefined ? { ...headers, authorization: `Bearer ${token}` } : signRequest(config, url, headers, body);
}

/** The headers to send: `headers` plus x-amz-date, authorization (and x-amz-security-token). `host` is signed but left for the HTTP client to send. */
async function signRequest(config: BedrockProviderConfig, url: URL, headers: Record<string, string>, body: string): Promise<Record<string, string>> {
  const signed = await signerFor(config).sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port !== '' ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: {},
    headers: { ...headers, host: url.host },
    body,
  });
  const { host: _host, ...sent } = signed.headers;
  return sent;
}
