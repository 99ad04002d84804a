// `npm run bench`: every scenario in turn, each writing its section of
// bench/RESULTS.md. Pass scenario names to run only some:
//   npm run bench -- otlp-throughput queue
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCENARIOS = ['otlp-throughput', 'queue-durability', 'gateway', 'mixed-load', 'gateway-max', 'open-streams', 'pipeline-rounds', 'cluster', 'gateway-usage'];
const wanted = process.argv.slice(2);
let failed = 0;
for (const name of SCENARIOS.filter((s) => wanted.length === 0 || wanted.includes(s))) {
  const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  process.stdout.write(`\n== ${name}\n`);
  const r = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
