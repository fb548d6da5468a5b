/**
 * Recall on the command line: `recall run ...` (run-cli.ts) and `recall memory ...` (memory-cli.ts). Runs on Node 22.5 or later
 * (node:sqlite), as `node dist/cli/index.js` or `npx` from the repository.
 */
import { memoryCommand, UsageError } from './memory-cli.js';
import { runCommand } from './run-cli.js';

const USAGE = `Usage:
  recall run --prompt TEXT [...]                                  (recall run --help for more)
  recall memory <search|list|show|prune> --store PATH ...         (recall memory --help for more)`;

export async function run(args: string[], io = { out: (l: string) => console.log(l), err: (l: string) => console.error(l) }): Promise<number> {
  const [group, ...rest] = args;
  let code = 0;
  try {
    if (group === 'run') code = await runCommand(rest, io);
    else if (group === 'memory') await memoryCommand(rest, io);
    else if (!group || group === '--help' || group === 'help') io.out(USAGE);
    else throw new UsageError(`unknown command ${JSON.stringify(group)}`);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`recall: ${error.message}\n${USAGE}`);
      code = 2;
    } else {
      io.err(`recall: ${(error as Error).message}`);
      code = 1;
    }
  }
  process.exitCode = code;
  return code;
}
