// Reads a V8 .cpuprofile (node --cpu-prof) and ranks functions by self time.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const IDLE = '(idle)';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  startTime: number; // µs
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  readonly name: string;
  /** Share of the busy (non-idle) time, %. */
  readonly percent: number;
}

/** Where a frame's code lives: a package, a source folder, a Node internal module, or a V8 pseudo-frame. */
function area(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return frame.functionName;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return pkg[1];
  const own = /\/dist\/((?:src|bench)\/(?:[^/]+\/)?[^/]+)\//.exec(url) ?? /\/dist\/((?:src|bench))\//.exec(url);
  if (own?.[1] !== undefined) return own[1];
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (internal?.[1] !== undefined) return `node:${internal[1]}`;
  return url;
}

function label(frame: CallFrame): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  const path = frame.url.startsWith('file://') ? relative(ROOT, fileURLToPath(frame.url)) : frame.url;
  return `${name} ${path}:${frame.lineNumber + 1}`;
}

export interface ProfileSummary {
  /** Top functions by self time. */
  readonly frames: Frame[];
  /** Self time summed per package, source folder or Node module, all of them, largest first. */
  readonly areas: Frame[];
  readonly busyMs: number;
  /**
   * The longest runs of consecutive busy samples (the event loop never went
   * idle in between), longest first, each with the function that had the
   * most self time in it. A run includes time the thread was descheduled.
   */
  readonly stretches: Stretch[];
}

export interface Stretch {
  readonly ms: number;
  readonly top: string;
}

const STRETCHES_KEPT = 8;

function closeStretch(kept: Stretch[], us: number, self: Map<string, number>): void {
  if (us === 0) return;
  const top = [...self.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '(unknown)';
  kept.push({ ms: us / 1000, top });
  kept.sort((a, b) => b.ms - a.ms);
  kept.length = Math.min(kept.length, STRETCHES_KEPT);
}

function rank(totals: Map<string, number>, busy: number, count: number): Frame[] {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, percent: (us / busy) * 100 }));
}

/** The top `count` functions and areas by self time in the newest profile of `dir`, leaving out its first `skipMs` (start-up). */
export function summarizeProfile(dir: string, count: number, skipMs: number): ProfileSummary {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .at(-1);
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const labels = new Map<number, string>(profile.nodes.map((n) => [n.id, label(n.callFrame)]));
  const areas = new Map<number, string>(profile.nodes.map((n) => [n.id, area(n.callFrame)]));
  const self = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busy = 0;
  let at = 0; // µs since the profile started
  const from = skipMs * 1000;
  const stretches: Stretch[] = [];
  let stretchUs = 0;
  let stretchSelf = new Map<string, number>();
  profile.samples.forEach(function addSample(id, i) {
    const name = labels.get(id) ?? '(unknown)';
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (name === IDLE || at < from) {
      closeStretch(stretches, stretchUs, stretchSelf);
      stretchUs = 0;
      stretchSelf = new Map();
      return;
    }
    stretchUs += us;
    stretchSelf.set(name, (stretchSelf.get(name) ?? 0) + us);
    busy += us;
    self.set(name, (self.get(name) ?? 0) + us);
    const where = areas.get(id) ?? '(unknown)';
    byArea.set(where, (byArea.get(where) ?? 0) + us);
  });
  closeStretch(stretches, stretchUs, stretchSelf);
  return { frames: rank(self, busy, count), areas: rank(byArea, busy, byArea.size), busyMs: busy / 1000, stretches };
}
