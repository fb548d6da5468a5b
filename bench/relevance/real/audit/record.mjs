// Records the label audit of the real-tracker sets (README.md here): `node record.mjs <keys.json>
// <answers dir>` reads the keys written by `npm run bench -- audit-cases` and every
// answers-<assessor>.jsonl ({ key, same: yes | no | unsure, why } lines) in the answers dir, and
// writes this folder's <set>.json: "<event id> <record id>" -> { pool, answers: { <assessor>: { same,
// why } } }, added to the pairs the file holds (an audit of new pairs, BENCH_AUDIT_NEW, keeps the
// earlier ones). Answers for keys it does not know, or with another value of `same`, are refused.
import * as fs from 'node:fs';
import * as path from 'node:path';

const [keysFile, dir] = process.argv.slice(2);
if (!keysFile || !dir) {
  console.error('usage: node bench/relevance/real/audit/record.mjs <keys.json> <dir with answers-*.jsonl>');
  process.exit(2);
}
const keys = JSON.parse(fs.readFileSync(keysFile, 'utf8'));
const bySet = {};
const refused = [];
const assessors = [];
for (const file of fs.readdirSync(dir).filter((f) => /^answers-.+\.jsonl$/.test(f)).sort()) {
  const assessor = file.slice('answers-'.length, -'.jsonl'.length);
  assessors.push(assessor);
  for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { key, same, why } = JSON.parse(line);
    const k = keys[key];
    if (!k || !['yes', 'no', 'unsure'].includes(same)) {
      refused.push(`${assessor}:${key}`);
      continue;
    }
    const pair = ((bySet[k.set] ??= {})[`${k.event} ${k.record}`] ??= { pool: k.pool, answers: {} });
    pair.answers[assessor] ??= { same, why: String(why ?? '').slice(0, 200) }; // the first answer stands
  }
}
for (const [set, pairs] of Object.entries(bySet)) {
  const file = path.join(import.meta.dirname, `${set}.json`);
  const earlier = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const sorted = Object.fromEntries(Object.entries({ ...earlier, ...pairs }).sort(([a], [b]) => a.localeCompare(b)));
  fs.writeFileSync(path.join(import.meta.dirname, `${set}.json`), JSON.stringify(sorted, null, 1) + '\n');
}
const missing = Object.values(bySet).flatMap((pairs) => Object.values(pairs)).filter((p) => assessors.some((a) => !p.answers[a])).length;
const unanswered = Object.keys(keys).length - Object.values(bySet).reduce((n, pairs) => n + Object.keys(pairs).length, 0);
console.log(`${assessors.length} assessors (${assessors.join(', ')}) over ${Object.keys(bySet).length} sets; ${missing} pairs missing an assessor, ${unanswered} pairs with no answer; ${refused.length} answers refused`);
