// Builds the real-tracker relevance sets (issue 24, "Likely means likely"): duplicate bug reports
// from public trackers, nobody here wrote, turned into the shape of bench/relevance/sets
// (runs.json: past reports as records imported without a card; events.json: new reports with the
// past ones a maintainer would want recalled). Each set's README.md beside this file says where
// the data comes from and how it is sampled.
//
// The data is not committed (nor anything of the source repository): this reads a copy of it from
// BENCH_REAL_SETS_SOURCE (a folder holding the source's hadoop/ and seamonkey/ folders) and writes
// BENCH_REAL_SETS (default /work/realsets)/<set>/{runs,events,source}.json. Deterministic: the same
// source and seed give the same files.
//
//   BENCH_REAL_SETS_SOURCE=/path/to/gitbugs BENCH_REAL_SETS=/work/realsets node bench/relevance/real/convert.mjs
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SEED = 24;
const MONTHS = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };

/** The sets: a tracker each. `noneCap` bounds the events with no related past; `pastCap` the records. */
export const SETS = [
  {
    name: 'hadoop-jira',
    reports: 'hadoop/hadoop_bugs.csv',
    links: 'hadoop/hadoop_bugs-combined.csv',
    // Jira's "30/Sep/21 17:20", UTC assumed (the export says no zone; only ages depend on it).
    created: (s) => {
      const m = /^(\d{2})\/(\w{3})\/(\d{2}) (\d{2}):(\d{2})$/.exec(s.trim());
      if (!m) throw new Error(`hadoop: unreadable Created date "${s}"`);
      return Date.UTC(2000 + Number(m[3]), MONTHS[m[2]], Number(m[1]), Number(m[4]), Number(m[5]));
    },
    noneCap: 60,
    pastCap: 2000,
  },
  {
    name: 'seamonkey-bugzilla',
    reports: 'seamonkey/SeaMonkey_bugs.csv',
    links: 'seamonkey/SeaMonkey_bugs-combined.csv',
    created: (s) => {
      const t = Date.parse(s.trim().replace(' ', 'T'));
      if (Number.isNaN(t)) throw new Error(`seamonkey: unreadable Created date "${s}"`);
      return t;
    },
    noneCap: 60,
    pastCap: 2000,
  },
];

/** RFC 4180 CSV (quoted fields may hold commas, doubled quotes and newlines): rows of fields. */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field), rows.push(row), (row = []), (field = '');
    } else field += c;
  }
  if (field !== '' || row.length) row.push(field), rows.push(row);
  return rows.filter((r) => r.some((f) => f.trim() !== ''));
}

function records(file) {
  const [head, ...rows] = parseCsv(readFileSync(file, 'utf8'));
  return rows.map((r) => Object.fromEntries(head.map((h, i) => [h.trim(), r[i] ?? ''])));
}

/** mulberry32: a small seeded generator, so the sampling is the same on every machine. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function shuffled(items, next) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Duplicate groups: every id a link names, the dump's or not, joined with what it is linked to. */
function groups(linkRows) {
  const parent = new Map();
  const find = (x) => {
    if (!parent.has(x)) parent.set(x, x);
    while (parent.get(x) !== x) parent.set(x, parent.get(parent.get(x))), (x = parent.get(x));
    return x;
  };
  for (const [a, b = ''] of linkRows) for (const d of b.match(/\d+/g) ?? []) parent.set(find(a.trim()), find(d));
  return { groupOf: (id) => (parent.has(id) ? find(id) : undefined) };
}

// The check sets/README.md names for paraphrased events: no title word shared, stop words aside,
// after lowercasing and stripping a trailing "s".
const STOP = new Set('a an and are as at be but by can cannot do does for from has have how i if in into is it its no not of on or should so that the their then there these this to too was we when where which while will with without you'.split(' '));
const titleWords = (t) => new Set(t.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 1 && !STOP.has(w)).map((w) => w.replace(/s$/, '')));

export function build(set, source) {
  const reports = records(join(source, set.reports)).map((r) => ({
    id: String(r['Issue id']).trim(),
    title: String(r.Summary ?? '').trim(),
    text: String(r.Description ?? '').trim(),
    resolution: String(r.Resolution ?? '').trim().toLowerCase(),
    at: set.created(r.Created),
  }));
  const byId = new Map(reports.map((r) => [r.id, r]));
  const linkRows = parseCsv(readFileSync(join(source, set.links), 'utf8')).slice(1);
  const { groupOf } = groups(linkRows);
  const members = new Map();
  for (const r of reports) {
    const g = groupOf(r.id);
    if (g !== undefined) members.set(g, [...(members.get(g) ?? []), r]);
  }
  const next = random(SEED);
  // With a duplicate among the past reports: in each group the dump holds two or more of, every
  // report but the oldest is an event (newest first), and the older ones stay past reports.
  const related = [];
  const eventIds = new Set();
  for (const group of [...members.values()].filter((m) => m.length > 1)) {
    const byAge = [...group].sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
    for (const r of byAge.slice(1)) related.push(r), eventIds.add(r.id);
  }
  // With no related past: a report the tracker closed as a duplicate (or linked as one) whose
  // group has no other report in the dump, so what it duplicates is not among the records.
  const lonely = reports.filter((r) => !eventIds.has(r.id) && (groupOf(r.id) === undefined ? r.resolution === 'duplicate' : members.get(groupOf(r.id)).length === 1));
  const none = shuffled(lonely, next).slice(0, set.noneCap);
  for (const r of none) eventIds.add(r.id);
  // Past reports: every group's that an event needs, then a seeded sample of the rest up to the cap.
  const needed = reports.filter((r) => !eventIds.has(r.id) && groupOf(r.id) !== undefined && members.get(groupOf(r.id)).some((m) => eventIds.has(m.id)));
  const rest = shuffled(reports.filter((r) => !eventIds.has(r.id) && !needed.includes(r)), next);
  const past = [...needed, ...rest.slice(0, Math.max(0, set.pastCap - needed.length))].sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  const pastIds = new Set(past.map((r) => r.id));
  const newest = Math.max(...reports.map((r) => r.at));
  const runId = (id) => `${set.name}-${id}`;
  const runs = past.map((r) => ({
    id: runId(r.id),
    threadKey: `issue-${r.id}`,
    event: `issues opened #${r.id}`,
    title: r.title,
    request: r.text,
    answer: '',
    age: Math.max(1, Math.ceil((newest - r.at) / 86_400_000)),
  }));
  const events = [...related, ...none]
    .sort((a, b) => a.at - b.at || a.id.localeCompare(b.id))
    .map((r) => {
      const relevant = members.get(groupOf(r.id) ?? '')?.filter((m) => m.id !== r.id && pastIds.has(m.id)) ?? [];
      const words = titleWords(r.title);
      const shares = relevant.some((m) => [...titleWords(m.title)].some((w) => words.has(w)));
      return {
        id: `${set.name}-e${r.id}`,
        kind: relevant.length === 0 ? 'unrelated' : shares ? 'direct' : 'paraphrased',
        title: r.title,
        text: r.text,
        threadKey: `issue-${r.id}`,
        relevant: relevant.map((m) => runId(m.id)),
      };
    });
  const day = (t) => new Date(t).toISOString().slice(0, 10);
  const count = (k) => events.filter((e) => e.kind === k).length;
  return {
    runs,
    events,
    source: {
      set: set.name,
      files: [set.reports, set.links],
      seed: SEED,
      reportsInDump: reports.length,
      pastReports: runs.length,
      events: events.length,
      withRelatedPast: events.length - count('unrelated'),
      direct: count('direct'),
      paraphrased: count('paraphrased'),
      noRelatedPast: count('unrelated'),
      window: `${day(Math.min(...[...past, ...related, ...none].map((r) => r.at)))} .. ${day(Math.max(...[...past, ...related, ...none].map((r) => r.at)))}`,
    },
  };
}

/** Writes every set from the dump in `source` into `out`; returns what each holds. */
export function convert(source, out) {
  return SETS.map((set) => {
    const { runs, events, source: about } = build(set, source);
    const dir = join(out, set.name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'runs.json'), `${JSON.stringify(runs, null, 1)}\n`);
    writeFileSync(join(dir, 'events.json'), `${JSON.stringify(events, null, 1)}\n`);
    writeFileSync(join(dir, 'source.json'), `${JSON.stringify(about, null, 1)}\n`);
    return about;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const source = process.env.BENCH_REAL_SETS_SOURCE;
  if (!source) {
    console.error('Set BENCH_REAL_SETS_SOURCE to a folder holding the source dump (hadoop/ and seamonkey/ of the GitBugs repository); see bench/relevance/real/README.md.');
    process.exit(2);
  }
  for (const about of convert(source, process.env.BENCH_REAL_SETS || '/work/realsets')) console.log(JSON.stringify(about));
}
