/**
 * What `recall memory --help` and each memory command's --help print: their usage, apart from the
 * code that does the work (memory-cli.ts). A mistake names the command whose usage helps.
 */
import { INPUT_DEFAULTS } from '../inputs.js';
import { PRIOR_WORK_LIMIT } from '../recall/startup.js';
import { OUT_HELP, SIGNED_HELP } from './change-store.js';
import { CARDS_USAGE } from './memory-cards-cli.js';

const STORE_HELP = `PATH is the memory folder \`recall run\` prints (the newest snapshot in it is read), a
snapshot folder, a memory folder as Recall restores it (the one holding opencode.db), or an Actions
cache archive file. Without --store: the local memory \`recall run\` keeps for this repository (the
top of the git repository holding --workspace, the current folder by default).
Nothing is written into PATH.`;

/** What a command that changes memory says of PATH. */
const CHANGED_HELP = `PATH (default: the local memory \`recall run\` keeps for this repository) is the memory folder \`recall run\` prints (its newest snapshot is changed), a snapshot folder
in it, a memory folder as Recall restores it, or an Actions cache archive file. ${OUT_HELP}`;

/** Each command's usage, printed by its --help and named by its mistakes. */
export const MEMORY_USAGES: Record<string, string> = {
  search: `Usage: recall memory search [--store PATH] --query TEXT [--limit K] [--json] [--workspace DIR]
       recall memory search [--store PATH] --event FILE [--event-name NAME] [--limit K] [--json] [--workspace DIR]

--query: searches memory as the agent's memory_search tool does: the best K records (default 5)
for the words of TEXT. --json prints [{ id, threadKey, sessionId, score, title, summary, source, wrong }],
best first; an id is what \`recall memory show --id\` takes. source is "OWNER/REPO #N" for a record
imported from another repository (labelled "imported from OWNER/REPO #N"), else null; wrong is
{ by, at } for a record marked wrong (its line says "Marked wrong by ... on ..."), else null.

--event: what the action would recall for an event before the agent starts (the same query, gate
and tiers; the prior-work section of its prompt names these): "likely" runs are shown with an
excerpt, "possible" ones one line each. FILE is the task as Recall builds it from an event,
  {"kind": "issues"|"issue_comment"|"pull_request"|"schedule", "title": "...", "body": "...",
   "labels": [...], "files": [...], "number": 12, "schedule": "job name"}
or, with --event-name (issues, issue_comment, pull_request, ...), the event's webhook payload (a
comment must address the default trigger phrase, ${INPUT_DEFAULTS['trigger-phrase']}; a pull request's changed files are
not in its payload: give them as "files" in a task). K defaults to ${PRIOR_WORK_LIMIT}, as in the action. --json
prints [{ id, threadKey, sessionId, score, tier, title, summary, source, wrong }], best first.

--workspace is the checkout the records' citations are checked against (default: the top of the git repository holding the current folder).

${STORE_HELP}`,
  list: `Usage: recall memory list [--store PATH] [--thread KEY] [--kind run|finding] [--limit K] [--json]

Lists the newest K records (default 20) of memory's index, or of one thread, with their ids.

${STORE_HELP}`,
  show: `Usage: recall memory show [--store PATH] --id RECORD_ID [--json] [--workspace DIR]

Shows one record (an id from search or list): the request, the answer or finding, and what became
of the code it cites in --workspace (default: the top of the git repository holding the current folder).

${STORE_HELP}`,
  cards: CARDS_USAGE,
  prune: `Usage: recall memory prune [--store PATH] [--max-sessions N] [--max-age-days D] [--record-retention-days D] [--write]

Applies the retention rule: keeps the newest N sessions (default 50) and every session updated in
the last D days (default 30), whichever keeps more; the records of pruned sessions stay in the
index, records older than --record-retention-days (default 365) go. Says what it would do; --write
does it on the memory folder PATH stands for (the newest snapshot of a memory-path, kept as a new
snapshot beside it).
${SIGNED_HELP}

PATH (default: the local memory \`recall run\` keeps for this repository) is the memory folder \`recall run\` prints, a snapshot folder in it, or a memory folder as
Recall restores it. An archive file cannot be pruned.`,
  forget: `Usage: recall memory forget [--store PATH] --id RECORD_ID [--out NEW_FILE]

Forgets one record (an id from search or list): the record and its card, its session
and the session's child sessions are removed, the store is vacuumed, and a tombstone in the index
keeps a save that merges another run's memory from bringing them back. A run's findings are
forgotten with it; a finding leaves its run's session, which the run still has. Prints what it
removed.
On GitHub, a comment \`<trigger> forget RECORD_ID\` by someone with write access does the same at
the next save.
${SIGNED_HELP}

${CHANGED_HELP}`,
  wrong: `Usage: recall memory wrong [--store PATH] --id RECORD_ID [--out NEW_FILE]

Marks one record wrong (an id from search or list), as a comment \`<trigger> wrong RECORD_ID\` by
someone with write access does on GitHub: the record stays in memory (what was tried and failed is
worth knowing), ranks after every record nobody marked, and the prior-work section says who marked
it and when. The mark is kept apart from the index, so a rebuilt index keeps it.
${SIGNED_HELP}

${CHANGED_HELP}`,
  import: `Usage: recall memory import [--store PATH] (--file FILE.jsonl | --from-github OWNER/REPO [--since DAYS]) [--replace-cards] [--cards [--model provider/model] [--opencode-config JSON]] [--out NEW_FILE]

Adds memory: from --file, one JSON object a line (docs/memory.md, "Importing memory", gives
the format): a card for a session's record, {"sessionId", "card"}, or a record with no session,
{"id", "kind", "title", "request", "answer", "files", "labels", "createdAt", "card"?}. With
--from-github, a record for each issue closed and each pull request merged in the last DAYS days
(default 90), read through the GitHub API (GITHUB_TOKEN or GH_TOKEN; GITHUB_API_URL for GitHub
Enterprise Server). Records of a repository other than GITHUB_REPOSITORY (this memory's) are
labelled "imported from OWNER/REPO #N" and keep threads of their own.

Nothing memory holds is lost or brought back: a record already there is kept, a card a record
already has is kept (--replace-cards replaces it), a forgotten record is refused. Importing again
adds nothing. Prints what it added, kept and refused, and why; exits 1 when a line was refused.
--cards writes a card for each record added, as \`recall memory cards\` does (its --help says how
the model is chosen: --model, RECALL_MODEL, OpenCode's small_model, its model).
Text is checked, bounded and cleaned like all memory; this process's credentials are redacted.
${SIGNED_HELP}

${CHANGED_HELP}`,
};

export const MEMORY_USAGE = `Usage: recall memory <search|list|show|cards|prune|forget|wrong|import> [--store PATH] [...]

  search   the records that match some words, or    (recall memory search --help)
           what the action would recall for an event
  list     the newest records, with their ids       (recall memory list --help)
  show     one record, and its cited code's state   (recall memory show --help)
  cards    write the cards records have not got     (recall memory cards --help)
  prune    apply the retention rule to a store      (recall memory prune --help)
  forget   remove one record and its session        (recall memory forget --help)
  wrong    mark one record wrong: kept, ranked last (recall memory wrong --help)
  import   add records and cards from a file or GitHub (recall memory import --help)

${STORE_HELP} prune --write, cards, forget, wrong and import change a memory folder in
place; an archive file they never change: they write its changed memory to --out NEW_FILE.`;
