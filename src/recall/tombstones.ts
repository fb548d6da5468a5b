/**
 * What people told Recall to forget (issue 19, RFC-006): a tombstone per forgotten record, naming
 * its sessions, who asked and when. They travel in the index so that a merge of an overlapping
 * run's memory does not bring a record back; they merge as a union, age out after the longest
 * retention, and, coming from a store others may write, are checked like records, and bounded.
 */
import { isSessionId } from '../memory/layout.js';

export interface Tombstone {
  /** The record forgotten. */
  id: string;
  /** Its session and the session's children, gone with it. */
  sessions: string[];
  /** Who asked: a GitHub login (`@x`), or `cli:<user>` for the memory CLI. */
  by: string;
  /** When (ISO). */
  at: string;
}

/** The most tombstones kept (the newest); as many as records are kept at most. */
export const MAX_TOMBSTONES = 5_000;
const MAX_SESSIONS = 200;

const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/** The tombstones in `v` that are of the shape Recall writes, newest first, at most MAX_TOMBSTONES. */
export function validTombstones(v: unknown): Tombstone[] {
  if (!Array.isArray(v)) return [];
  const out: Tombstone[] = [];
  for (const t of v.slice(0, MAX_TOMBSTONES * 2)) {
    if (!t || typeof t !== 'object') continue;
    const x = t as Record<string, unknown>;
    if (typeof x.id !== 'string' || x.id.length > 120 || !/^[\w.-]+$/.test(x.id) || !isTime(x.at)) continue;
    const by = typeof x.by === 'string' ? x.by.replace(/\s+/g, ' ').trim().slice(0, 100) : '';
    const sessions = Array.isArray(x.sessions) ? x.sessions.filter(isSessionId).slice(0, MAX_SESSIONS) : [];
    out.push({ id: x.id, sessions, by, at: x.at });
  }
  return unionTombstones(out, []);
}

/** Both lists as one: a record forgotten twice keeps its first tombstone, with every session either names. */
export function unionTombstones(a: readonly Tombstone[], b: readonly Tombstone[]): Tombstone[] {
  const byId = new Map<string, Tombstone>();
  for (const t of [...a, ...b]) {
    const had = byId.get(t.id);
    if (!had) byId.set(t.id, { ...t, sessions: [...t.sessions] });
    else {
      const first = Date.parse(had.at) <= Date.parse(t.at) ? had : t;
      byId.set(t.id, { ...first, sessions: [...new Set([...had.sessions, ...t.sessions])].slice(0, MAX_SESSIONS) });
    }
  }
  return [...byId.values()].sort((x, y) => Date.parse(y.at) - Date.parse(x.at)).slice(0, MAX_TOMBSTONES);
}

/** The tombstones younger than `maxAgeDays` at `now`. */
export function ageTombstones(tombstones: readonly Tombstone[], maxAgeDays: number, now: Date): Tombstone[] {
  const cutoff = now.getTime() - maxAgeDays * 86_400_000;
  return tombstones.filter((t) => Date.parse(t.at) >= cutoff);
}

/** The ids and sessions the tombstones name. */
export function forgottenIn(tombstones: readonly Tombstone[]): { ids: Set<string>; sessions: Set<string> } {
  return { ids: new Set(tombstones.map((t) => t.id)), sessions: new Set(tombstones.flatMap((t) => t.sessions)) };
}
