import * as fs from 'node:fs';
import * as path from 'node:path';
import * as inspector from 'node:inspector';
import { it } from 'vitest';
import { MemoryIndex } from '../src/recall/memory-index.js';
import { RECORDS_FILE } from '../src/memory/layout.js';
import { EVENTS } from './relevance/ledgerly.js';
import { HELDOUT_EVENTS } from './relevance/heldout.js';
import { THIRD_EVENTS } from './relevance/third.js';
const QUERIES = [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS].map((e) => ({ title: e.title, text: e.text, ...(e.labels ? { labels: e.labels } : {}), ...(e.paths ? { paths: e.paths } : {}) }));
const dir = '/tmp/prof37';
const open = () => new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, RECORDS_FILE), workspace: '/tmp', threadOf: () => undefined, clock: () => new Date() });
it('prof', async () => {
  const first = open(); first.recall(QUERIES[0]!, { limit: 3 }); first.save();
  const times: number[] = [];
  const session = new inspector.Session(); session.connect();
  const post = (m: string, p?: object) => new Promise<any>((res, rej) => session.post(m, p ?? {}, (e, r) => (e ? rej(e) : res(r))));
  await post('Profiler.enable'); await post('Profiler.setSamplingInterval', { interval: 200 }); await post('Profiler.start');
  const per: Array<[number, string, number]> = [];
  for (let round = 0; round < 2; round++) for (const q of QUERIES) { const t = performance.now(); const ix = open(); const got = ix.recall(q, { limit: 3 }); times.push(performance.now() - t); per.push([performance.now() - t, q.title, got.length]); if (ix.searching !== 'kept postings') throw new Error(ix.searching); }
  const { profile } = await post('Profiler.stop');
  fs.writeFileSync('/tmp/prof37.cpuprofile', JSON.stringify(profile));
  per.sort((a, b) => b[0] - a[0]); console.log(per.slice(0, 15).map((x) => `${x[0].toFixed(1)} ${x[2]} ${x[1]}`).join('\n'));
  times.sort((a, b) => a - b);
  console.log('p50', times[Math.floor(times.length / 2)]!.toFixed(1), 'p95', times[Math.floor(times.length * 0.95)]!.toFixed(1));
  // self time by function
  const self = new Map<string, number>(); const byId = new Map(profile.nodes.map((n: any) => [n.id, n]));
  const dt = profile.timeDeltas as number[]; const samples = profile.samples as number[];
  samples.forEach((id, i) => { const n: any = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${path.basename(n.callFrame.url)}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0)); });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${(v / 1000).toFixed(0).padStart(6)} ms ${((100 * v) / total).toFixed(1).padStart(5)}% ${k}`).join('\n'));
}, 600000);
