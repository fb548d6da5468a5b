/**
 * Recall's own index, kept in the memory directory beside OpenCode's database: which session
 * each thread (issue-12, pr-7, schedule-nightly) continues, and which deliveries were already
 * answered. Session titles are not keys: OpenCode renames sessions on its own.
 */
import * as path from 'node:path';
import { readMemoryFile, writeMemoryFile } from '../memory/files.js';
import { isSessionId, THREAD_INDEX_FILE } from '../memory/layout.js';
import { isThreadKey } from './thread-key.js';
import type { SentTurns } from '../memory/store.js';

const MAX_DELIVERIES = 1_000;

interface IndexFile {
  version: 1;
  threads: Record<string, { sessionId: string; updatedAt: string }>;
  deliveries: Record<string, { sessionId: string; at: string }>;
  /** Per session, digests of the user messages Recall sent in it (store-check.ts). */
  turns?: Record<string, string[]>;
}

export class ThreadIndex implements SentTurns {
  private constructor(
    private readonly file: string,
    private data: IndexFile,
  ) {}

  /**
   * Read the index from the memory directory; a missing or unreadable one starts empty. With
   * `workingFile`, save() writes there (out of the agent's reach) rather than into memory.
   */
  static load(memoryDir: string, o: { workingFile?: string } = {}): { index: ThreadIndex; problem?: string } {
    const file = path.join(memoryDir, THREAD_INDEX_FILE);
    const target = o.workingFile ?? file;
    const empty: IndexFile = { version: 1, threads: {}, deliveries: {} };
    try {
      const text = readMemoryFile(file);
      if (text === undefined) return { index: new ThreadIndex(target, empty) };
      const parsed = JSON.parse(text) as Partial<IndexFile>;
      // Memory comes from a store others may write: keep only entries of the shape Recall writes.
      const valid = <T extends { sessionId: string }>(entries: unknown, shape: (v: Record<string, unknown>) => boolean, keyOk: (key: string) => boolean = (key) => key.length <= 200) =>
        Object.fromEntries(
          Object.entries(isRecord(entries) ? entries : {}).filter(([key, v]) => keyOk(key) && isRecord(v) && isSessionId(v.sessionId) && shape(v)),
        ) as Record<string, T>;
      const turns = Object.fromEntries(
        Object.entries(isRecord(parsed.turns) ? parsed.turns : {}).filter(
          ([id, list]) => isSessionId(id) && Array.isArray(list) && list.every((d) => typeof d === 'string' && /^[0-9a-f]{32}$/.test(d)),
        ),
      ) as Record<string, string[]>;
      return {
        index: new ThreadIndex(target, {
          version: 1,
          threads: valid(parsed.threads, (v) => typeof v.updatedAt === 'string', isThreadKey),
          deliveries: valid(parsed.deliveries, (v) => typeof v.at === 'string'),
          turns,
        }),
      };
    } catch (error) {
      return {
        index: new ThreadIndex(target, empty),
        problem: `${THREAD_INDEX_FILE} could not be read (${(error as Error).message}); threads start new conversations this run`,
      };
    }
  }

  sessionFor(threadKey: string): string | undefined {
    return this.data.threads[threadKey]?.sessionId;
  }

  /** The thread a session belongs to, when the index knows it. */
  threadOf(sessionId: string): string | undefined {
    return Object.entries(this.data.threads).find(([, t]) => t.sessionId === sessionId)?.[0];
  }

  answered(deliveryId: string): string | undefined {
    return this.data.deliveries[deliveryId]?.sessionId;
  }

  /** The thread continues in this session (recorded as soon as the session exists). */
  remember(threadKey: string, sessionId: string, now: Date): void {
    this.data.threads[threadKey] = { sessionId, updatedAt: now.toISOString() };
  }

  /** The delivery was answered (recorded only once the agent answered: a failed run may be re-run). */
  answeredWith(deliveryId: string, sessionId: string, now: Date): void {
    this.data.deliveries[deliveryId] = { sessionId, at: now.toISOString() };
    const deliveries = Object.entries(this.data.deliveries);
    if (deliveries.length > MAX_DELIVERIES) {
      deliveries.sort(([, a], [, b]) => a.at.localeCompare(b.at));
      this.data.deliveries = Object.fromEntries(deliveries.slice(deliveries.length - MAX_DELIVERIES));
    }
  }

  /** Recall sends `text` as a user message in the session: record it (store-check.ts checks them). */
  recordTurn(sessionId: string, digest: string): void {
    const turns = (this.data.turns ??= {});
    turns[sessionId] = [...(turns[sessionId] ?? []), digest];
  }

  /** Takes a session's user messages as Recall's (a session an older Recall saved, unrecorded). */
  trustTurns(sessionId: string, digests: readonly string[]): void {
    (this.data.turns ??= {})[sessionId] = [...digests];
  }

  /** The user messages Recall sent in the session, or undefined when it has no record of it. */
  turnsOf(sessionId: string): ReadonlySet<string> | undefined {
    const list = this.data.turns?.[sessionId];
    return list ? new Set(list) : undefined;
  }

  /** Drop threads and records whose session no longer exists (pruned, or lost with corrupted memory). */
  keepOnly(existingSessions: ReadonlySet<string>): void {
    for (const [key, thread] of Object.entries(this.data.threads)) {
      if (!existingSessions.has(thread.sessionId)) delete this.data.threads[key];
    }
    for (const id of Object.keys(this.data.turns ?? {})) {
      if (!existingSessions.has(id)) delete this.data.turns![id];
    }
  }

  /**
   * Take from another run's index what belongs to sessions merged in from its store: a thread
   * this index lacks, or holds with an older update, and the deliveries those sessions answered.
   */
  adopt(other: ThreadIndex, mergedSessions: ReadonlySet<string>): void {
    for (const [key, thread] of Object.entries(other.data.threads)) {
      if (!mergedSessions.has(thread.sessionId)) continue;
      const mine = this.data.threads[key];
      if (!mine || mine.updatedAt < thread.updatedAt) this.data.threads[key] = thread;
    }
    for (const [id, delivery] of Object.entries(other.data.deliveries)) {
      if (mergedSessions.has(delivery.sessionId) && !this.data.deliveries[id]) this.data.deliveries[id] = delivery;
    }
    for (const [id, turns] of Object.entries(other.data.turns ?? {})) {
      if (mergedSessions.has(id)) (this.data.turns ??= {})[id] = turns;
    }
  }

  save(): void {
    writeMemoryFile(this.file, `${JSON.stringify(this.data, null, 2)}\n`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The record of sent turns in memory directory `memoryDir`, as the snapshot store reads it (the
 * entry points hand it over: memory/ never imports recall/). An unreadable index reads as empty.
 */
export function sentTurnsIn(memoryDir: string): SentTurns {
  return ThreadIndex.load(memoryDir).index;
}
