// curl as a test client: its exit code (60: unknown CA, 35/56: handshake
// refused) and its stdout, never throwing for a failed transfer.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function curl(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await run('curl', ['-s', '--max-time', '10', ...args]);
    return { code: 0, out: stdout };
  } catch (err) {
    const failure = err as { code?: number; stdout?: string };
    return { code: failure.code ?? -1, out: failure.stdout ?? '' };
  }
}
