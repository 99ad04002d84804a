// TLS for every listener: the files named in `tls` are read and checked when
// the config is validated, so a missing or unusable file is a `validate`
// error naming its YAML path, and a SIGHUP (which validates again) re-reads
// them: a rotated certificate is served to the next connection.
import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureVersion, type TlsOptions } from 'node:tls';
import { z } from 'zod';
import { isPemBundle } from '../../shared/pem.js';

const MIN_VERSIONS: Readonly<Record<string, SecureVersion>> = { '1.0': 'TLSv1', '1.1': 'TLSv1.1', '1.2': 'TLSv1.2', '1.3': 'TLSv1.3' };

export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Client certificates must chain to this CA (mTLS) when set. */
  readonly clientCa: Buffer | undefined;
  readonly minVersion: SecureVersion;
}

function readPem(file: string, key: string, ctx: z.RefinementCtx): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    ctx.addIssue({ code: 'custom', path: [key], message: `cannot read ${file}: ${code}` });
    return undefined;
  }
}

function versionText(value: unknown): unknown {
  if (typeof value !== 'number') return value;
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}

export const tlsSchema = z
  .strictObject({
    cert_file: z.string().min(1),
    key_file: z.string().min(1),
    client_ca_file: z.string().min(1).optional(),
    // Unquoted in YAML, 1.2 is a number and 1.0 is 1: read as the version written.
    min_version: z.preprocess(versionText, z.enum(['1.0', '1.1', '1.2', '1.3'])).default('1.2'),
  })
  .transform(function loadTls(raw, ctx): TlsMaterial {
    const cert = readPem(raw.cert_file, 'cert_file', ctx);
    const key = readPem(raw.key_file, 'key_file', ctx);
    const clientCa = raw.client_ca_file === undefined ? undefined : readPem(raw.client_ca_file, 'client_ca_file', ctx);
    if (cert === undefined || key === undefined || (raw.client_ca_file !== undefined && clientCa === undefined)) return z.NEVER;
    const minVersion = MIN_VERSIONS[raw.min_version] ?? 'TLSv1.2';
    try {
      createSecureContext({ cert, key, minVersion });
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['key_file'], message: `${raw.cert_file} and ${raw.key_file} are not a usable PEM certificate and matching key: ${err instanceof Error ? err.message : String(err)}` });
      return z.NEVER;
    }
    if (clientCa !== undefined) {
      // OpenSSL skips what is not a certificate, so a file of garbage would pass and refuse every client.
      if (!isPemBundle(clientCa.toString('utf8'))) {
        ctx.addIssue({ code: 'custom', path: ['client_ca_file'], message: `${raw.client_ca_file ?? ''} holds no PEM CA certificate (or a block that does not parse)` });
        return z.NEVER;
      }
      try {
        createSecureContext({ ca: clientCa });
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['client_ca_file'], message: `${raw.client_ca_file ?? ''} is not a usable PEM CA certificate: ${err instanceof Error ? err.message : String(err)}` });
        return z.NEVER;
      }
    }
    return { cert, key, clientCa, minVersion };
  });

/** Options for tls.createServer / https.createServer. */
export function tlsServerOptions(material: TlsMaterial): TlsOptions {
  const mutual = material.clientCa !== undefined;
  // OpenSSL 3's default security level refuses TLS 1.0 and 1.1 whatever minVersion says: asked for, they get level 0.
  const legacy = material.minVersion === 'TLSv1' || material.minVersion === 'TLSv1.1';
  return {
    cert: material.cert,
    key: material.key,
    minVersion: material.minVersion,
    ...(legacy ? { ciphers: 'DEFAULT:@SECLEVEL=0' } : {}),
    ...(mutual ? { ca: material.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
}
