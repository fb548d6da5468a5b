/**
 * What an event and a record share besides words, for the hit's reasons ("file a/b.ts", "error
 * ..."): the agent is told why a run was recalled. It adds nothing to the score (RFC-006 "No boost
 * for a shared file or error line"): a file's path and an error line's words are fields of the
 * record's BM25F already (`paths`, `errors`), weighed by how telling they are; a boost on top
 * counted them twice, and on hadoop-jira lifted records that merely touched a common file over the
 * related one.
 */
import type { Doc } from './corpus.js';
import { basename, jaccard, SAME_ERROR } from './record-evidence.js';

export class SharedEvidence {
  constructor(
    private readonly queryPaths: ReadonlySet<string>,
    private readonly queryBasenames: ReadonlySet<string>,
    private readonly queryErrors: readonly string[],
  ) {}

  /** The first file record `d` names that the event names too: by path, else by a telling file name. */
  fileOf(d: Doc): string | undefined {
    const paths = [...d.paths];
    return paths.find((p) => this.queryPaths.has(p)) ?? paths.find((p) => this.queryBasenames.has(basename(p)));
  }

  /** The first of the event's error lines that record `d` has the same error as. */
  errorOf(d: Doc): string | undefined {
    return this.queryErrors.find((e) => d.errors.some((x) => jaccard(e, x) >= SAME_ERROR));
  }
}
