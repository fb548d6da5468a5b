/**
 * Recall's own index, kept in the memory directory beside OpenCode's database: which session
 * each thread (issue-12, pr-7, schedule-nightly) continues, and which deliveries were already
 * answered. Session titles are not keys: OpenCode renames sessions on its own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const THREAD_INDEX_FILE = 'recall-threads.json';
const MAX_DELIVERIES = 1_000;

interface IndexFile {
  version: 1;
  threads: Record<string, { sessionId: string; updatedAt: string }>;
  deliveries: Record<string, { sessionId: string; at: string }>;
}

export class ThreadIndex {
  private constructor(
    private readonly file: string,
    private data: IndexFile,
  ) {}

  /** Read the index from the memory directory; a missing or unreadable one starts empty. */
  static load(memoryDir: string): { index: ThreadIndex; problem?: string } {
    const file = path.join(memoryDir, THREAD_INDEX_FILE);
    const empty: IndexFile = { version: 1, threads: {}, deliveries: {} };
    if (!fs.existsSync(file)) return { index: new ThreadIndex(file, empty) };
    try {
      const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<IndexFile>;
      return {
        index: new ThreadIndex(file, { version: 1, threads: parsed.threads ?? {}, deliveries: parsed.deliveries ?? {} }),
      };
    } catch (error) {
      return {
        index: new ThreadIndex(file, empty),
        problem: `${THREAD_INDEX_FILE} could not be read (${(error as Error).message}); threads start new conversations this run`,
      };
    }
  }

  sessionFor(threadKey: string): string | undefined {
    return this.data.threads[threadKey]?.sessionId;
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

  /** Drop threads whose session no longer exists (pruned, or lost with corrupted memory). */
  keepOnly(existingSessions: ReadonlySet<string>): void {
    for (const [key, thread] of Object.entries(this.data.threads)) {
      if (!existingSessions.has(thread.sessionId)) delete this.data.threads[key];
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
  }

  save(): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    fs.writeFileSync(this.file, `${JSON.stringify(this.data, null, 2)}\n`);
  }
}
