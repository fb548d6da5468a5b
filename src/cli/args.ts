/**
 * How every `recall` command reads its flags, so that they behave like the tools people know:
 * `--help`/`-h` anywhere prints that command's own usage (exit 0), a negative number is read as
 * a value (Node's parser takes `-1` for an option), and every mistake is one line that names the
 * flag and what to write, with the command whose `--help` shows the rest.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from '../errors.js';

/** A mistake in how a command was called: one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The command whose usage helps (e.g. "memory search"). */
    readonly command = '',
  ) {
    super(message);
  }
}

/** Where a command prints: its answer on `out`, what it says about it on `err`. */
export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Text as one line: every run of whitespace one space. */
export const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses `args` for `command` with `options` (strict, no positionals): its values, or 'help' when
 * `--help` or `-h` is among them. Unknown flags and missing values become one-line UsageErrors.
 */
export function parseCommand<O extends Options>(command: string, args: readonly string[], options: O) {
  if (args.some((a) => a === '--help' || a === '-h')) return 'help' as const;
  // A value that starts with a dash and a digit is a (negative) number, not a flag: say `--limit=-1`.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    const next = args[i + 1];
    const name = flag.startsWith('--') ? flag.slice(2) : undefined;
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${flag}=${next}`);
      i++;
    } else joined.push(flag);
  }
  try {
    return parseArgs({ args: joined, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(parseProblem((error as Error).message, command, Object.keys(options)), command);
  }
}

/** Node's parser's complaint as one line in Recall's words. */
function parseProblem(message: string, command: string, flags: readonly string[]): string {
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return `${command} has no option ${unknown[1]}${didYouMean(unknown[1]!, [...flags.map((f) => `--${f}`), '--help'])}`;
  const missing = /Option '([^']+?)(?: <value>)?' argument missing/.exec(message) ?? /Option '([^']+)' argument is ambiguous/.exec(message);
  if (missing) return `${missing[1]!.replace(/^-\w, /, '')} needs a value`;
  const positional = /Unexpected argument '([^']+)'/.exec(message);
  if (positional) return `${command} takes no argument ${JSON.stringify(positional[1])}: every value follows its flag (e.g. --query "words")`;
  return message.split('\n')[0]!;
}

/** The whole number a flag gives, at least `min` (1 unless said); `fallback` when it is not given. */
export function wholeNumber(value: string | undefined, flag: string, fallback: number, command: string, min = 1): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value.trim()) || Number(value) < min) {
    throw new UsageError(`--${flag} must be a whole number of ${min} or more, not ${JSON.stringify(value)}`, command);
  }
  return Number(value);
}

/** The text a flag gives, not blank. */
export function words(value: string | undefined, flag: string, what: string, command: string): string {
  const text = value?.trim() ?? '';
  if (!text) throw new UsageError(value === undefined ? `${command} needs --${flag} ${what}` : `--${flag} is blank: give ${what}`, command);
  return text;
}

/**
 * A command's usage fitted to `width` columns: a longer line is broken at spaces, its following
 * parts indented as it is (a `Usage: recall ...` line under its command). Shorter lines, and the
 * layout of examples, are kept as written.
 */
export function fitUsage(text: string, width = 100): string {
  return text.split('\n').flatMap((line) => fitLine(line, width)).join('\n');
}

function fitLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const lead = /^\s*/.exec(line)![0];
  const usage = /^\s*Usage: recall \S+(?: [a-z]+)? /.exec(line)?.[0];
  const indent = usage ? ' '.repeat(usage.length) : lead;
  const out: string[] = [];
  let current = lead;
  for (const word of line.slice(lead.length).split(' ')) {
    if (current.trim() && current.length + 1 + word.length > width) {
      out.push(current);
      current = indent + word;
    } else current = current.trim() ? `${current} ${word}` : current + word;
  }
  return [...out, current];
}
