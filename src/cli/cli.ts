/**
 * Recall on the command line: `recall run ...` (run-cli.ts) and `recall memory ...` (memory-cli.ts),
 * as `node dist/cli/index.js` or `npx recall` from the repository (index.ts checks the Node version
 * first). A mistake in how a command was called is one line and exit code 2; memory that cannot
 * be read, or a run that failed, is one line and exit code 1.
 */
import { DEFAULT_OPENCODE_VERSION } from '../agent/install.js';
import { UsageError } from './args.js';
import { memoryCommand } from './memory-cli.js';
import { runCommand } from './run-cli.js';
import { describe, didYouMean } from '../errors.js';
import PACKAGE from '../../package.json' with { type: 'json' };

const USAGE = `Usage: recall <command> [--help]

  run      run the agent on a checkout, with memory          (recall run --help)
  memory   search, list, show, cards, prune, forget, wrong or
           import memory                                      (recall memory --help)

  recall --version   prints Recall's version and the OpenCode release it runs`;

/**
 * Text as a terminal should get it from memory or a model: control characters (escape sequences that
 * clear the screen or retitle the window, a bell, a carriage return that writes over a line) and the
 * marks that reorder text (bidirectional overrides) are written out as `\uNNNN`, so that what a
 * stranger's title or an agent's answer holds is shown, never acted on. That form is JSON's own
 * escape: inside a string of `--json` output (JSON.stringify leaves DEL, the C1 controls and the
 * bidirectional marks as they are) it reads back as the character, and the output stays JSON
 * (`\x7f` and `\u{202e}` broke every line that held one: stop 44's review).
 */
export const terminalSafe = (text: string): string =>
  text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export async function run(args: string[], to = { out: (l: string) => console.log(l), err: (l: string) => console.error(l) }): Promise<number> {
  const io = { out: (l: string) => to.out(terminalSafe(l)), err: (l: string) => to.err(terminalSafe(l)) };
  const [group, ...rest] = args;
  let code = 0;
  try {
    if (group === 'run') code = await runCommand(rest, io);
    else if (group === 'memory') code = (await memoryCommand(rest, io)) ?? 0;
    else if (group === '--version' || group === '-v' || group === 'version') io.out(`recall ${PACKAGE.version} (OpenCode ${DEFAULT_OPENCODE_VERSION})`);
    else if (!group || group === '--help' || group === '-h' || group === 'help') io.out(USAGE);
    else throw new UsageError(`there is no command ${JSON.stringify(group)}${didYouMean(group, ['run', 'memory', '--version', '--help'])}: run or memory (recall --help)`);
  } catch (error) {
    if (error instanceof UsageError) {
      const help = error.command ? ` (recall ${error.command} --help shows how)` : '';
      io.err(`recall: ${error.message}${help}`);
      code = 2;
    } else {
      io.err(`recall: ${describe(error)}`);
      code = 1;
    }
  }
  process.exitCode = code;
  return code;
}
