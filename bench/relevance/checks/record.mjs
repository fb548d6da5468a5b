// Records the check model's answers (bench/relevance/checks.ts): `node record.mjs <dir>` reads
// <dir>/keys.json (written by `npm run bench -- check-cases`) and every <dir>/answers-*.jsonl
// ({ key, reply } lines from whoever acted as the check model), and writes this folder's
// <set>.json: event id -> { asked, reply }. Answers for keys it does not know are refused.
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/relevance/checks/record.mjs <dir with keys.json and answers-*.jsonl>');
  process.exit(2);
}
const keys = JSON.parse(fs.readFileSync(path.join(dir, 'keys.json'), 'utf8'));
const bySet = {};
let answered = 0;
const unknown = [];
const seen = new Set();
for (const file of fs.readdirSync(dir).filter((f) => /^answers-.*\.jsonl$/.test(f)).sort()) {
  for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { key, reply } = JSON.parse(line);
    const k = keys[key];
    if (!k || typeof reply !== 'string') {
      unknown.push(key);
      continue;
    }
    if (seen.has(key)) continue; // the first answer stands
    seen.add(key);
    (bySet[k.set] ??= {})[k.event] = { asked: k.asked, reply };
    answered++;
  }
}
for (const [set, checks] of Object.entries(bySet)) {
  const sorted = Object.fromEntries(Object.entries(checks).sort(([a], [b]) => a.localeCompare(b)));
  fs.writeFileSync(path.join(import.meta.dirname, `${set}.json`), JSON.stringify(sorted, null, 1) + '\n');
}
const missing = Object.keys(keys).filter((k) => !seen.has(k)).length;
console.log(`${answered} answers recorded over ${Object.keys(bySet).length} sets; ${missing} cases without an answer; ${unknown.length} answers refused (unknown key or no reply)`);
