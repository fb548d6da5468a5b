/**
 * The three sets nobody who worked on the ranker has seen (bench/relevance/sets/README.md: written
 * by a helper who never saw it, in many voices; their cards by helpers who saw only each set's past
 * runs).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validCard } from '../../src/recall/card.js';
import type { PastRun, RelevanceEvent } from './ledgerly.js';

export const UNSEEN = ['tidepool', 'quarry', 'ferrule'] as const;

export function unseenSet(name: string) {
  const dir = path.join(import.meta.dirname, 'sets', name);
  const read = <T>(file: string): T => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as T;
  const runs = read<PastRun[]>('runs.json');
  const events = read<RelevanceEvent[]>('events.json');
  const cards = new Map(Object.entries(read<Record<string, unknown>>('cards.json')).flatMap(([id, c]) => (validCard(c) ? [[id, validCard(c)!] as const] : [])));
  return { name, runs, events, cards };
}
