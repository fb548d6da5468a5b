/**
 * Importing into a memory directory no OpenCode has open (issue 19, item 5): records with no
 * session are added, cards are put on the records of sessions memory holds. Idempotent: a record
 * already there, or a card a record already has, adds nothing; a record someone told Recall to
 * forget is not brought back by an import either.
 */
import * as path from 'node:path';
import { sessionIdsIn } from '../memory/merge.js';
import type { Card } from '../recall/card.js';
import { recordFromSession } from '../recall/rebuild.js';
import { RECORDS_FILE } from '../memory/layout.js';
import { loadRecords, saveRecords } from '../recall/index-file.js';
import type { RunRecord } from '../recall/records.js';
import { sessionTexts } from '../recall/store-reader.js';
import { ThreadIndex } from '../recall/threads.js';
import { forgottenIn } from '../recall/tombstones.js';
import type { Imported } from './imported.js';

export interface ImportReport {
  added: string[];
  /** Records a card was put on: `<record id> (session <id>)`. */
  merged: string[];
  unchanged: string[];
  refused: Array<{ where: string; why: string }>;
}

const sameCard = (a: Card | undefined, b: Card): boolean => {
  if (!a) return false;
  const strip = ({ at: _a, tokens: _t, cost: _c, ...rest }: Card) => JSON.stringify(rest);
  return strip(a) === strip(b);
};

/** Adds what `items` hold to memory directory `dir` (where each came from, for the report); what it did. */
export function importInto(dir: string, items: ReadonlyArray<{ where: string; imported: Imported }>): ImportReport {
  const report: ImportReport = { added: [], merged: [], unchanged: [], refused: [] };
  const { records, forgotten } = loadRecords(dir);
  const gone = forgottenIn(forgotten);
  const byId = new Map(records.map((r) => [r.id, r]));
  const stored = new Set(sessionIdsIn(dir));
  let changed = false;
  for (const { where, imported } of items) {
    if ('problem' in imported) {
      report.refused.push({ where, why: imported.problem });
    } else if ('record' in imported) {
      const { record } = imported;
      if (gone.ids.has(record.id)) report.refused.push({ where, why: `${record.id} was forgotten (recall memory forget, or a forget comment): an import does not bring it back` });
      else if (byId.has(record.id)) report.unchanged.push(record.id);
      else {
        byId.set(record.id, record);
        records.push(record);
        report.added.push(record.id);
        changed = true;
      }
    } else {
      const { sessionId, card } = imported;
      let record: RunRecord | undefined = records.find((r) => r.sessionId === sessionId);
      if (!record && stored.has(sessionId) && !gone.sessions.has(sessionId)) {
        // A session the index has no record of yet: its record as a run would rebuild it.
        const threads = ThreadIndex.load(dir).index;
        record = sessionTexts(dir, [sessionId]).map((s) => recordFromSession(s, threads.threadOf(s.id)))[0];
        if (record) records.push(record);
      }
      if (!record) report.refused.push({ where, why: `unknown session ${sessionId}: no record or session in this memory has it` });
      else if (sameCard(record.card, card)) report.unchanged.push(record.id);
      else {
        record.card = card;
        report.merged.push(`${record.id} (session ${sessionId})`);
        changed = true;
      }
    }
  }
  if (changed) saveRecords(path.join(dir, RECORDS_FILE), records, forgotten);
  return report;
}

/** The report as the CLI prints it: a line for each record added or merged and each refusal, then the counts. */
export function describeImport(report: ImportReport, total: number): string[] {
  return [
    ...report.added.map((id) => `added ${id}`),
    ...report.merged.map((r) => `merged a card into ${r}`),
    ...report.refused.map((r) => `refused ${r.where}: ${r.why}`),
    `Added ${report.added.length}, merged ${report.merged.length}, unchanged ${report.unchanged.length}, refused ${report.refused.length} (of ${total}).`,
  ];
}
