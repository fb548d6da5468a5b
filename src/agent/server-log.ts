/**
 * What OpenCode's server says about its own failures (RFC-003): its warnings and errors, printed
 * (`--print-logs --log-level WARN`) rather than written into a log folder that goes with the run. Its
 * "Check server logs for details." points nowhere on a runner: Recall says what the log says instead,
 * keeps the lines beside the transcript, and prints the last of them when a run fails.
 */

/** The most entries kept (a run that fails over and over logs the same error many times). */
const KEPT = 200;
/** What OpenCode says when the reason is only in its log. */
const POINTS_TO_LOG = /\s*Check (?:the )?server logs?(?: for details)?\.?/i;

export class ServerLog {
  private readonly entries: string[] = [];

  /** One line of the server's output: a `level=WARN|ERROR` entry, or the continuation of the last one. */
  add(line: string): void {
    if (/(^|\s)level=(WARN|ERROR)\b/.test(line)) {
      this.entries.push(line);
      if (this.entries.length > KEPT) this.entries.shift();
    } else if (this.entries.length > 0 && !/(^|\s)level=[A-Z]+\b/.test(line) && !/^opencode server listening/.test(line)) {
      // A multi-line value (a stack, a provider's response body) belongs to the entry before it.
      this.entries[this.entries.length - 1] += `\n${line}`;
    }
  }

  /** Every entry kept, oldest first. */
  lines(): string[] {
    return [...this.entries];
  }

  /** The last errors, each as one short sentence: what failed and why. */
  lastErrors(n = 2): string[] {
    return this.entries
      .filter((e) => /(^|\s)level=ERROR\b/.test(e))
      .slice(-n)
      .map(summarize);
  }

  /**
   * `message` with OpenCode's pointer to its log replaced by what the log says (the last errors),
   * or as it is when it has no such pointer or the log has no error.
   */
  explain(message: string): string {
    if (!POINTS_TO_LOG.test(message)) return message;
    const errors = this.lastErrors();
    if (errors.length === 0) return message;
    return `${message.replace(POINTS_TO_LOG, '')} OpenCode's log says: ${errors.join(' / ')}`;
  }
}

/** One logfmt entry (`message="stream error" error.error="AI_APICallError: ..."`) as a short sentence. */
function summarize(entry: string): string {
  const fields = new Map<string, string>();
  for (const m of entry.matchAll(/([\w.]+)=("((?:[^"\\]|\\.)*)"?|\S+)/g)) fields.set(m[1]!, m[3] ?? m[2]!);
  const what = fields.get('message') ?? 'error';
  const why = ['error.message', 'error.error', 'error'].map((k) => fields.get(k)).find(Boolean) ?? [...fields.entries()].find(([k]) => k.startsWith('error.'))?.[1];
  const text = why ? `${what}: ${why}` : what;
  const line = text.replace(/\\n/g, ' ').replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
