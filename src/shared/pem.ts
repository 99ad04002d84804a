// PEM certificate bundles (CA files in the config, CA text in the drains API):
// Node's TLS skips a certificate it cannot parse without a word, and every
// connection then fails verification, so a bad one is refused up front.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** One or more certificates, each of which parses. */
export function isPemBundle(text: string): boolean {
  const blocks = text.match(PEM_BLOCK) ?? [];
  return blocks.length > 0 && blocks.every(function parses(block) {
    try {
      new X509Certificate(block);
      return true;
    } catch {
      return false;
    }
  });
}

/** What is wrong with a CA file, or undefined when it holds parsable certificates. */
export function caFileProblem(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  return isPemBundle(text) ? undefined : 'must be a PEM certificate file';
}
