/**
 * The model check on the relevance sets (issue 24, RFC-006 "The model check"), from recorded
 * answers: no model runs here, so whoever acts as the check model (a helper that never saw the
 * ranker or the sets' answers) is given each event's real check prompt (`checkPrompt`, the
 * candidates recall finds for it) under an opaque key, and its replies are kept in
 * bench/relevance/checks/<set>.json as event id -> the candidates asked about (record ids, in
 * order), the system prompt it answered under (`system`, CHECK_SYSTEM_ID) and the reply. The
 * bench applies a reply only when recall still asks about the same candidates in the same order,
 * under the same system prompt; otherwise the event is counted as the words decide it (stale).
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Card, RecalledWork } from '../../src/ports.js';
import { CHECK_CANDIDATES, CHECK_SYSTEM, applyCheck, checkCandidates, checkPrompt, parseCheck, shownPriorWork } from '../../src/recall/model-check.js';
import type { RecordSearch } from '../../src/recall/search.js';
import { asRecalled, eventFigures, setSearch, type EventFigures } from './evaluate.js';
import type { PastRun, RelevanceEvent } from './ledgerly.js';

export const CHECKS_DIR = path.join(import.meta.dirname, 'checks');

/** Which CHECK_SYSTEM an answer was given under: a changed system prompt makes every answer stale. */
export const CHECK_SYSTEM_ID = crypto.createHash('sha256').update(CHECK_SYSTEM).digest('hex').slice(0, 12);

/** One recorded answer: the candidates it was asked about, under which system prompt, and what it replied. */
export interface RecordedCheck {
  asked: string[];
  system?: string;
  reply: string;
}

/** Whether `recorded` answers the question recall asks now: these candidates, in order, under this system prompt. */
export const answersNow = (recorded: RecordedCheck | undefined, asked: readonly string[]): boolean => !!recorded && recorded.system === CHECK_SYSTEM_ID && recorded.asked.join('\n') === asked.join('\n');

export type RecordedChecks = Record<string, RecordedCheck>;

export function loadChecks(name: string): RecordedChecks | undefined {
  const file = path.join(CHECKS_DIR, `${name}.json`);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as RecordedChecks) : undefined;
}

/** What recall hands the check for an event: the hits, as many as the check may be asked about. */
export function recalledFor(search: RecordSearch, e: RelevanceEvent): RecalledWork[] {
  return asRecalled(search.search({ title: e.title, text: e.text, labels: e.labels, paths: e.paths, threadKey: e.threadKey }, { limit: CHECK_CANDIDATES }));
}

/** The check's case for each event that has candidates: its prompt and the candidates' ids. */
export function checkCases(search: RecordSearch, events: readonly RelevanceEvent[]): { event: string; asked: string[]; prompt: string }[] {
  return events.flatMap((e) => {
    const asked = checkCandidates(recalledFor(search, e));
    return asked.length ? [{ event: e.id, asked: asked.map((w) => w.record.id), prompt: checkPrompt({ title: e.title, text: e.text }, asked) }] : [];
  });
}

/**
 * What is shown for an event once the check has decided: the recorded reply applied to the same
 * candidates, the likely tier first, at most `limit`; the lexical tiers (the top `limit` by score)
 * when there is no usable reply; in the product's order (`shownPriorWork`). `stale` says a reply
 * was recorded for other candidates or under another system prompt.
 */
export function shownAfterCheck(search: RecordSearch, e: RelevanceEvent, checks: RecordedChecks, limit = 5): { shown: RecalledWork[]; decided: 'model' | 'lexical' | 'stale' } {
  const recalled = recalledFor(search, e);
  const asked = checkCandidates(recalled);
  const recorded = checks[e.id];
  const current = answersNow(recorded, asked.map((w) => w.record.id));
  const same = current ? parseCheck(recorded!.reply, asked.length) : undefined;
  // As in the product, a reply out of shape leaves the words to decide; one for other candidates is stale.
  if (!same || 'problem' in same) return { shown: shownPriorWork(recalled, 'lexical', limit), decided: recorded && !current ? 'stale' : 'lexical' };
  return { shown: shownPriorWork(applyCheck(recalled, asked, same.same), 'model', limit), decided: 'model' };
}

/** A set's figures with the recorded check applied (per event, as eventFigures counts), and how each event was decided. */
export function checkedFigures(runs: readonly PastRun[], events: readonly RelevanceEvent[], checks: RecordedChecks, cards?: ReadonlyMap<string, Card>): { figures: EventFigures; decided: Record<'model' | 'lexical' | 'stale', number> } {
  const search = setSearch(runs, cards);
  const decided = { model: 0, lexical: 0, stale: 0 };
  const shown = new Map(
    events.map((e) => {
      const s = shownAfterCheck(search, e, checks);
      decided[s.decided]++;
      return [e, s.shown.map((w) => ({ id: w.record.id, likely: w.tier === 'likely' }))] as const;
    }),
  );
  return { figures: eventFigures(events, (e) => shown.get(e) ?? []), decided };
}
