import * as path from 'node:path';
import { it } from 'vitest';
import { MemoryIndex } from '../src/recall/memory-index.js';
import { RECORDS_FILE } from '../src/memory/layout.js';
import { EVENTS } from './relevance/ledgerly.js';
import { HELDOUT_EVENTS } from './relevance/heldout.js';
import { THIRD_EVENTS } from './relevance/third.js';
const QUERIES = [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS].map((e) => ({ title: e.title, text: e.text, ...(e.labels ? { labels: e.labels } : {}), ...(e.paths ? { paths: e.paths } : {}) }));
const dir = process.env.AB_DIR!;
const open = () => new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, RECORDS_FILE), workspace: '/tmp', threadOf: () => undefined, clock: () => new Date() });
it('ab', () => {
  const first = open(); first.recall(QUERIES[0]!, { limit: 3 }); first.save();
  const pick = QUERIES.filter((q) => /TypeError|Unsubscribe|Migration fails|npm ci|Overview page/.test(q.title));
  const t0 = performance.now(); for (let i = 0; i < 10; i++) open(); const openMs = (performance.now() - t0) / 10;
  for (const q of pick) { const ts: number[] = []; for (let i = 0; i < 12; i++) { const t = performance.now(); open().recall(q, { limit: 3 }); ts.push(performance.now() - t); } ts.sort((a, b) => a - b); console.log(`RES ${ts[6]!.toFixed(1)} ms ${q.title}`); }
  console.log(`RES open alone ${openMs.toFixed(1)} ms`);
}, 600000);
