// Writes a scenario's figures into bench/RESULTS.md, replacing that
// scenario's previous section (between its markers) and keeping the others.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

const RESULTS = fileURLToPath(new URL('../../../bench/RESULTS.md', import.meta.url));
const HEADER = '# Benchmark results\n\nWritten by `npm run bench`; each section is replaced when its scenario runs again.\n';

export function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  let kernel = '';
  try {
    kernel = execSync('uname -r').toString().trim();
  } catch {
    kernel = 'unknown kernel';
  }
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${kernel}, Node ${process.version}`;
}

export function table(head: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function writeSection(id: string, title: string, body: string): void {
  const begin = `<!-- bench:${id} -->`;
  const end = `<!-- /bench:${id} -->`;
  const date = new Date().toISOString().slice(0, 10);
  const section = `${begin}\n## ${title}\n\nMeasured ${date} on ${machine()}.\n\n${body.trim()}\n${end}`;
  let text = existsSync(RESULTS) ? readFileSync(RESULTS, 'utf8') : HEADER;
  const at = text.indexOf(begin);
  const until = text.indexOf(end);
  text = at !== -1 && until !== -1 ? text.slice(0, at) + section + text.slice(until + end.length) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(RESULTS, text);
  process.stdout.write(`\n${section}\n`);
}

/** Pins this (load-generating) process to a core so the daemon under test has the other. */
export function pinSelf(core: number): void {
  try {
    execSync(`taskset -cp ${core} ${process.pid}`, { stdio: 'ignore' });
  } catch {
    // taskset missing: measurements still run, unpinned.
  }
}
