import { it } from 'vitest';
import { loadRealSets } from './relevance/real/sets.js';
import { setSearch } from './relevance/evaluate.js';
import { Bm25, TEXTBOOK } from './relevance/bm25.js';
import { unseenSet, UNSEEN } from './relevance/unseen.js';
it('diag', () => {
  for (const s of [...loadRealSets().present, ...UNSEEN.map((name) => ({ name, ...unseenSet(name) }))]) {
    const search = setSearch(s.runs);
    const index = new Bm25(s.runs.map((r) => ({ id: r.id, text: `${r.title}\n${r.request}\n${r.answer}` })), TEXTBOOK);
    const title = new Map(s.runs.map((r) => [r.id, r.title]));
    const out: string[] = [];
    for (const e of s.events) {
      if (!e.relevant.length) continue;
      const hits = search.search({ title: e.title, text: e.text, labels: e.labels, paths: e.paths, threadKey: e.threadKey }, { limit: 50 });
      const b = index.top(`${e.title}\n${e.text}`, 50);
      const rank = (ids: string[]) => Math.min(...e.relevant.map((r) => { const i = ids.indexOf(r); return i < 0 ? 99 : i + 1; }));
      const rr = rank(hits.map((h) => h.record.id)), rb = rank(b);
      if ((rr <= 5) === (rb <= 5)) continue;
      out.push(`${e.id} recall#${rr} bm25#${rb} :: ${e.title}`);
      for (const r of e.relevant) { const h = hits.find((x) => x.record.id === r); out.push(`   REL ${r} ${title.get(r)} ${h ? `score ${h.score.toFixed(3)} rel ${h.relevance.toFixed(2)} [${h.matched.slice(0, 8).join(',')}]` : 'not shown'}`); }
      for (const h of hits.slice(0, 5)) out.push(`   got ${h.record.id} ${h.tier[0]} ${h.score.toFixed(3)} rel ${h.relevance.toFixed(2)} ${h.record.title.slice(0, 70)} [${h.matched.slice(0, 8).join(',')}]`);
    }
    require('node:fs').writeFileSync(`/work/diag/${s.name}.txt`, out.join('\n'));
  }
});
