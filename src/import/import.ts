/**
 * Importing into a memory directory no OpenCode has open (issues 19, 24): sessionless records
 * added, cards put on records without one. Nothing memory holds is lost or brought back: existing
 * records and cards are kept (unless --replace-cards), forgotten ones refused, an unreadable index
 * never written.
 */
import * as path from 'node:path';
import { sessionIdsIn } from '../memory/merge.js';
import { recordFromSession } from '../recall/rebuild.js';
import { RECORDS_FILE } from '../memory/layout.js';
import { damageCount, loadRecords, saveRecords } from '../recall/index-file.js';
import { sessionTexts } from '../recall/store-reader.js';
import { ThreadIndex } from '../recall/threads.js';
import { forgottenIn } from '../recall/tombstones.js';
import type { Imported } from './imported.js';
import type { OtherId } from '../recall/thread-key.js';
import type { Card, RunRecord } from '../ports.js';

export interface ImportReport {
  /** What memory did not hold: `legacy-42`, `a card to run-1-1 (session ses_…)`. */
  added: string[];
  /** Cards that took the place of a record's own, asked for with --replace-cards. */
  replaced: string[];
  /** What memory held already: the record or the same card, or (`why`) a card it kept in place of the one imported. */
  kept: Array<{ where: string; id: string; why?: string }>;
  refused: Array<{ where: string; why: string }>;
}

export interface ImportOptions {
  /** A card a record already has is replaced by an imported one (--replace-cards); else it stays. */
  replaceCards?: boolean;
}

/** Raised when memory cannot be read well enough to be written again without losing any of it. */
export class ImportRefused extends Error {
  override name = 'ImportRefused';
}

const sameCard = (a: Card | undefined, b: Card): boolean => {
  if (!a) return false;
  const strip = ({ at: _a, tokens: _t, cost: _c, ...rest }: Card) => JSON.stringify(rest);
  return strip(a) === strip(b);
};

/** Adds what `items` hold to memory directory `dir` (where each came from, for the report); what it did. */
export function importInto(dir: string, items: ReadonlyArray<{ where: string; imported: Imported }>, o: ImportOptions = {}): ImportReport {
  const report: ImportReport = { added: [], replaced: [], kept: [], refused: [] };
  const { records, forgotten, held } = loadRecords(dir);
  // Written again from what could be read, the index would lose the rest of its records for good
  // (the CLI refuses it before this too, change-store.ts; this guards every other caller).
  if (held !== undefined) throw new ImportRefused(`${RECORDS_FILE} is damaged (${damageCount(records.length, held)}), so import writes nothing: written again, it would lose the records it holds. Restore it from an earlier snapshot, then import again`);
  const gone = forgottenIn(forgotten);
  // Compared without case too: a GitHub item's id once kept its repository's name as typed
  // (gh-Other.Lib-issue-3), and one forgotten so is not brought back as gh-other.lib-issue-3.
  const goneIds = new Map([...gone.ids].map((id) => [id.toLowerCase(), id]));
  const byId = new Map(records.map((r) => [r.id, r]));
  const byLowerId = new Map<string, RunRecord>();
  for (const r of records) if (!byLowerId.has(r.id.toLowerCase())) byLowerId.set(r.id.toLowerCase(), r);
  /** Why `record` (or the same item under another id, `others`) was forgotten; undefined when it was not. */
  const forgottenAs = (record: RunRecord, others: readonly OtherId[]): string | undefined => {
    if (gone.ids.has(record.id)) return `${record.id} was forgotten (recall memory forget, or a forget comment): an import does not bring it back`;
    for (const other of [...others, { id: record.id, why: 'an id is forgotten whatever its case', certain: true }]) {
      const was = goneIds.get(other.id.toLowerCase());
      if (was) return `${record.id} ${other.certain ? 'was' : 'may have been'} forgotten as ${was} (recall memory forget, or a forget comment; ${other.why}): an import does not bring it back`;
    }
    return undefined;
  };
  /** The record memory holds for `record`: its id, or the same item under another id (`others`, without case). */
  const heldAs = (record: RunRecord, others: readonly OtherId[]): RunRecord | undefined =>
    byId.get(record.id) ?? others.filter((o) => o.certain).map((o) => byLowerId.get(o.id.toLowerCase())).find((r) => r !== undefined);
  const stored = new Set(sessionIdsIn(dir));
  let changed = false;
  /** Gives `record` the imported card, unless it has one of its own (kept, unless asked to replace it). */
  const putCard = (where: string, record: RunRecord, card: Card, named: string) => {
    if (sameCard(record.card, card)) report.kept.push({ where, id: record.id });
    else if (record.card && !o.replaceCards) report.kept.push({ where, id: record.id, why: `${named} has a card already (by ${record.card.by ?? 'a model'}); --replace-cards replaces it` });
    else {
      (record.card ? report.replaced : report.added).push(`${record.card ? 'the card of' : 'a card to'} ${named}`);
      record.card = card;
      changed = true;
    }
  };
  for (const { where, imported } of items) {
    if ('problem' in imported) {
      report.refused.push({ where, why: imported.problem });
    } else if ('record' in imported) {
      const { record } = imported;
      const others = imported.others ?? [];
      const had = heldAs(record, others);
      const forgottenWhy = forgottenAs(record, others);
      if (forgottenWhy) report.refused.push({ where, why: forgottenWhy });
      else if (had && record.card) putCard(where, had, record.card, had.id);
      else if (had) report.kept.push({ where, id: had.id });
      else {
        byId.set(record.id, record);
        if (!byLowerId.has(record.id.toLowerCase())) byLowerId.set(record.id.toLowerCase(), record);
        records.push(record);
        report.added.push(record.id);
        changed = true;
      }
    } else {
      const { sessionId, card } = imported;
      let record: RunRecord | undefined = records.find((r) => r.sessionId === sessionId);
      if (!record && gone.sessions.has(sessionId)) {
        report.refused.push({ where, why: `session ${sessionId} was forgotten (recall memory forget, or a forget comment): an import does not bring it back` });
        continue;
      }
      if (!record && stored.has(sessionId)) {
        // A session the index has no record of yet: its record as a run would rebuild it.
        const threads = ThreadIndex.load(dir).index;
        record = sessionTexts(dir, [sessionId]).map((s) => recordFromSession(s, threads.threadOf(s.id)))[0];
        if (record) records.push(record);
      }
      if (!record) report.refused.push({ where, why: `unknown session ${sessionId}: no record or session in this memory has it` });
      else putCard(where, record, card, `${record.id} (session ${sessionId})`);
    }
  }
  if (changed) saveRecords(path.join(dir, RECORDS_FILE), records, forgotten);
  return report;
}

/**
 * The report as the CLI prints it: a line for each record or card added or replaced, each card
 * kept in place of an imported one, and each refusal with why; then the counts.
 */
export function describeImport(report: ImportReport, total: number, o: ImportOptions = {}): string[] {
  return [
    ...report.added.map((what) => `added ${what}`),
    ...report.replaced.map((what) => `replaced ${what}`),
    ...report.kept.filter((k) => k.why).map((k) => `kept ${k.where}: ${k.why}`),
    ...report.refused.map((r) => `refused ${r.where}: ${r.why}`),
    `Added ${report.added.length}, ${o.replaceCards ? `replaced ${report.replaced.length}, ` : ''}kept ${report.kept.length}, refused ${report.refused.length} (of ${total}).`,
  ];
}
