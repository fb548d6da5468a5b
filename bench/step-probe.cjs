// Preload for bench/steps.bench.ts (BENCH_STEPS_NODE_OPTIONS="--require bench/step-probe.cjs --cpu-prof"): each stdout line stamped with the ms since the step began; at exit, SQL statements prepared and run, databases opened, files read.
delete process.env.NODE_OPTIONS;
const t0 = performance.timeOrigin;
const origWrite = process.stdout.write.bind(process.stdout);
let atLineStart = true;
process.stdout.write = (chunk, ...rest) => {
  const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
  const ms = (Date.now() - t0).toFixed(0).padStart(6);
  let out = '';
  for (const ch of s.split(/(?<=\n)/)) { out += (atLineStart ? `[${ms}] ` : '') + ch; atLineStart = ch.endsWith('\n'); }
  return origWrite(out, ...rest);
};
const counts = { prepare: 0, exec: 0, stmtRun: 0, stmtAll: 0, stmtGet: 0, stmtIterate: 0, rowsIterated: 0, dbOpen: 0, readFileSync: 0, readFile: 0, openSync: 0, readBytes: 0 };
const fs = require('node:fs');
for (const name of ['readFileSync', 'openSync']) { const o = fs[name]; fs[name] = function (...a) { counts[name]++; const r = o.apply(this, a); if (name==='readFileSync' && r && r.length) counts.readBytes += r.length; return r; }; }
const fp = fs.promises; const orf = fp.readFile; fp.readFile = function (...a) { counts.readFile++; return orf.apply(this, a); };
try {
  const sq = require('node:sqlite');
  const D = sq.DatabaseSync;
  const P = D.prototype;
  const op = P.prepare; P.prepare = function (...a) { counts.prepare++; return op.apply(this, a); };
  const oe = P.exec; P.exec = function (...a) { counts.exec++; return oe.apply(this, a); };
  const S = sq.StatementSync.prototype;
  for (const [m, k] of [['run','stmtRun'],['all','stmtAll'],['get','stmtGet'],['iterate','stmtIterate']]) { const o = S[m]; S[m] = function (...a) { counts[k]++; return o.apply(this, a); }; }
  sq.DatabaseSync = new Proxy(D, { construct(t, a, nt) { counts.dbOpen++; return Reflect.construct(t, a, nt); } });
} catch (e) { process.stderr.write('no sqlite patch ' + e + '\n'); }
process.on('exit', () => { process.stderr.write(`COUNTS ${JSON.stringify(counts)} total ${(Date.now()-t0)}ms\n`); });
