import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Tests only: Node keeps the code it compiled for a module on disk and reuses it the next time the
 * same file loads (`NODE_COMPILE_CACHE`, Node 22+). The suite starts the bundled action's main and
 * post steps hundreds of times, and the CLI often, and each compiled the same 3.4 MB bundle from
 * scratch: loading the whole bundle took 0.14 s of CPU, 0.07 s with the cache warm (RFC-001, "Node's
 * compile cache in the tests"). Node checks each entry against the source's hash, so a rebuilt
 * dist/ is compiled again, never run from stale code.
 * Kept in this clone's node_modules/.cache (git-ignored, per clone, so a fresh clone starts cold
 * and worktrees never share one). Set for every test file through vitest.config.ts `test.env`,
 * which vitest also gives its worker processes when it starts them; a user's run is not touched.
 */
export const NODE_COMPILE_CACHE_FOR_TESTS: Record<string, string> = {
  NODE_COMPILE_CACHE: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.cache', 'recall-tests-node-compile-cache'),
};
