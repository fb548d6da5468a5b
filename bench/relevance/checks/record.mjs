// Records the check model's answers (bench/relevance/checks.ts): `node record.mjs <dir>` reads
// <dir>/keys.json (written by `npm run bench -- check-cases`) and every <dir>/answers-*.jsonl
// ({ key, reply } lines from whoever acted as the check model) or <dir>/answers-*.json (one object,
// key -> reply), and files them in this folder's <set>.json: event id -> { asked, system, reply }. An answer
// replaces the one recorded for its event, and the set's other events keep theirs, so that only the
// stale cases need asking again when the ranker changes. Answers for keys it does not know are refused.
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/relevance/checks/record.mjs <dir with keys.json and answers-*.jsonl or answers-*.json>');
  process.exit(2);
}
const keys = JSON.parse(fs.readFileSync(path.join(dir, 'keys.json'), 'utf8'));
const bySet = {};
let answered = 0;
const unknown = [];
const seen = new Set();
/** A file's answers as { key, reply }: JSON lines, or one object key -> reply. */
function answersIn(file) {
  const text = fs.readFileSync(path.join(dir, file), 'utf8');
  if (file.endsWith('.json')) return Object.entries(JSON.parse(text)).map(([key, reply]) => ({ key, reply }));
  return text.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}
for (const file of fs.readdirSync(dir).filter((f) => /^answers-.*\.jsonl?$/.test(f)).sort()) {
  for (const { key, reply } of answersIn(file)) {
    const k = keys[key];
    if (!k || typeof reply !== 'string') {
      unknown.push(key);
      continue;
    }
    if (seen.has(key)) continue; // the first answer stands
    seen.add(key);
    (bySet[k.set] ??= {})[k.event] = { asked: k.asked, ...(k.system ? { system: k.system } : {}), reply };
    answered++;
  }
}
for (const [set, checks] of Object.entries(bySet)) {
  const file = path.join(import.meta.dirname, `${set}.json`);
  const before = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const sorted = Object.fromEntries(Object.entries({ ...before, ...checks }).sort(([a], [b]) => a.localeCompare(b)));
  fs.writeFileSync(file, JSON.stringify(sorted, null, 1) + '\n');
}
const missing = Object.keys(keys).filter((k) => !seen.has(k)).length;
console.log(`${answered} answers recorded over ${Object.keys(bySet).length} sets; ${missing} cases without an answer; ${unknown.length} answers refused (unknown key or no reply)`);
