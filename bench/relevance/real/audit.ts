/**
 * The label audit of the real-tracker sets (issue 24; bench/relevance/real/audit/README.md). The
 * trackers' duplicate links are sparse: a report filed twice is often left unlinked. Assessors who
 * never saw the ranker, the check or the links judged every pair of an event and a record put in the
 * likely tier (and controls); a pair all of them call the same problem is counted relevant beside the
 * tracker's links. Only the likely tier was pooled, so audited labels measure the likely tier's
 * precision and how many events without a related past get a likely hit, never top-5 recall against
 * a baseline whose hits nobody assessed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RelevanceEvent } from '../ledgerly.js';

export const AUDIT_DIR = path.join(import.meta.dirname, 'audit');

type Same = 'yes' | 'no' | 'unsure';
export type Pool = 'likely-linked' | 'likely-unlinked' | 'control';
export interface AuditedPair {
  pool: Pool;
  answers: Record<string, { same: Same; why: string }>;
}
export type Audit = Record<string, AuditedPair>;

export function loadAudit(set: string): Audit | undefined {
  const file = path.join(AUDIT_DIR, `${set}.json`);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Audit) : undefined;
}

const unanimous = (p: AuditedPair) => Object.values(p.answers).length > 0 && Object.values(p.answers).every((a) => a.same === 'yes');

/** The events with every pair all assessors call the same problem added to the tracker's links. */
export function auditedEvents(events: readonly RelevanceEvent[], audit: Audit): RelevanceEvent[] {
  const added = new Map<string, string[]>();
  for (const [pair, p] of Object.entries(audit)) {
    if (!unanimous(p)) continue;
    const [event, record] = pair.split(' ') as [string, string];
    added.set(event, [...(added.get(event) ?? []), record]);
  }
  return events.map((e) => ({ ...e, relevant: [...new Set([...e.relevant, ...(added.get(e.id) ?? [])])] }));
}

/** How the assessors answered, per pool: yes / no / unsure for each, pairs all called the same, and agreement. */
export function describeAudit(name: string, audit: Audit): string {
  const pools: Pool[] = ['likely-linked', 'likely-unlinked', 'control'];
  const pairs = Object.values(audit);
  const assessors = [...new Set(pairs.flatMap((p) => Object.keys(p.answers)))].sort();
  const per = pools.map((pool) => {
    const inPool = pairs.filter((p) => p.pool === pool);
    const counts = assessors.map((a) => {
      const c = { yes: 0, no: 0, unsure: 0 };
      for (const p of inPool) if (p.answers[a]) c[p.answers[a].same]++;
      return `${a} ${c.yes}/${c.no}/${c.unsure}`;
    });
    return `${pool} ${inPool.length}: ${counts.join(', ')}; all yes ${inPool.filter(unanimous).length}`;
  });
  // Each pair was answered by its round's two assessors (A and B, then C and D, ...).
  const both = pairs.filter((p) => Object.keys(p.answers).length >= 2);
  const agree = both.filter((p) => new Set(Object.values(p.answers).map((a) => a.same)).size === 1).length;
  return `${name} audit (yes/no/unsure): ${per.join('; ')}; assessors agree on ${agree} of ${both.length} pairs`;
}
