// The queue directory lock across processes: two processes asking for it at
// the same instant, on a free directory or over a dead holder's lock, never
// both get it. Each round runs two real processes on the built module
// (`npm test` builds dist/ first).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockDirectory } from '../../src/queue/directory-lock.js';

const MODULE = join(import.meta.dirname, '../../dist/src/queue/directory-lock.js');
const ROUNDS = 12;

// Waits for the shared start time, asks for the lock, says what happened, and
// holds on (without releasing) until its stdin closes: a round ends only
// once both processes have asked, each still alive while the other asks.
const CONTENDER = `
const { lockDirectory } = await import(process.argv[1]);
const [directory, at] = [process.argv[2], Number(process.argv[3])];
while (Date.now() < at) {}
try {
  await lockDirectory(directory);
  console.log('held');
} catch (err) {
  console.log(err.code === 'SLUICE_ERR_QUEUE_LOCKED' ? 'refused' : 'error ' + err.message);
}
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

function contender(directory: string, at: number) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CONTENDER, pathToFileURL(MODULE).href, directory, String(at)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const answer = new Promise<string>((resolve) => child.stdout.on('data', () => out.includes('\n') && resolve(out.trim())));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { answer, end: () => (child.stdin.end(), exited) };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('queue directory lock', () => {
  it('goes to exactly one of two processes asking at once, on a free directory and over a dead holder\'s lock', { timeout: 60_000 }, async () => {
    expect(existsSync(MODULE)).toBe(true);
    const outcomes: string[][] = [];
    // Round 1 finds no lock; each later one finds the lock the last round's holder left when it exited.
    for (let round = 0; round < ROUNDS; round++) {
      const at = Date.now() + 400; // both processes are up by then, spinning for the same instant
      const pair = [contender(dir, at), contender(dir, at)];
      const answers = await Promise.all(pair.map((c) => c.answer));
      await Promise.all(pair.map((c) => c.end()));
      outcomes.push(answers.sort());
    }
    expect(outcomes).toEqual(Array.from({ length: ROUNDS }, () => ['held', 'refused']));
  });

  // A small tmpfs makes a real full disk; mounting one needs root.
  it.runIf(process.getuid?.() === 0)('is taken on a full disk, over the lock a killed process left, so a restarted daemon can deliver its queues', async () => {
    const full = join(dir, 'full');
    await mkdir(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
    try {
      const queue = join(full, 'q');
      await mkdir(queue);
      await writeFile(join(queue, 'lock'), '999999999'); // an earlier version's lock, of a dead holder (above any pid_max)
      await writeFile(join(full, 'filler'), Buffer.alloc(256 * 1024)).catch((err: NodeJS.ErrnoException) => expect(err.code).toBe('ENOSPC'));
      const lock = await lockDirectory(queue);
      expect((await readlink(join(queue, 'lock'))).split(':')[0]).toBe(String(process.pid));
      await lock.release();
    } finally {
      execFileSync('umount', [full]);
    }
  });
});
