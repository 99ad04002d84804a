// A provider's own credentials, should its upstream echo them in an error
// ("invalid key: sk-..."), must not reach the client or the spans: hiding
// them from clients is much of what a gateway is for. OpenAI masks a key it
// refuses; OpenAI-compatible servers and the proxies in between do not all.
import { credentialsRedactor } from '../../../shared/redact-url.js';
import { basicAuthorization } from '../../../shared/url-credentials.js';
import type { BaseProviderConfig } from '../providers/shared/types.js';

/** Config keys that hold a credential, in any provider type (Bedrock's access keys among them). */
const CREDENTIAL_KEYS = ['api_key', 'secret_access_key', 'session_token'] as const;

/** The AWS variables a Bedrock provider without access_key_id signs (or authorizes) with, read per request (bedrock/signer.ts). */
const AWS_SECRET_VARIABLES = ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_BEARER_TOKEN_BEDROCK'] as const;

/**
 * Replaces the provider's credentials (keys, header values, those in its
 * base_url and the Basic authorization they are sent as; for Bedrock signing with the environment's credentials, those as
 * they are now) in a text with `***`.
 */
export function providerSecretsRedactor(config: BaseProviderConfig): (text: string) => string {
  const fields: Partial<Record<(typeof CREDENTIAL_KEYS)[number] | 'access_key_id', unknown>> = config;
  const credentials = CREDENTIAL_KEYS.map((key) => fields[key]).filter((value) => typeof value === 'string');
  // The Basic authorization base_url's credentials are sent as (upstream.ts) is theirs too.
  const basic = basicAuthorization(new URL(config.base_url));
  const configured = credentialsRedactor(config.base_url, [...credentials, ...Object.values(config.headers ?? {}), ...(basic === undefined ? [] : [basic])]);
  if (config.type !== 'bedrock' || fields.access_key_id !== undefined) return configured;
  return function redactWithEnvironment(text) {
    const fromEnvironment = AWS_SECRET_VARIABLES.map((name) => process.env[name]).filter((value) => value !== undefined);
    return credentialsRedactor('', fromEnvironment)(configured(text));
  };
}
