/**
 * A checkout with an origin on disk for publish's tests over real repositories: a bare remote,
 * a work tree with one commit pushed, and publishChanges run as the action runs it (the private
 * git directory made from the checkout first, then the agent acts, then publish).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readCheckout, type CheckoutFacts } from '../../src/git/checkout.js';
import { publishChanges, type PublishOptions } from '../../src/publish/publish.js';
import { Staging } from '../../src/publish/staging.js';

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1' };
/** git in `cwd`, its output trimmed. */
export const sh = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, '-c', 'protocol.file.allow=always', ...args], { encoding: 'utf8', env: gitEnv }).trim();

export interface PublishRepo {
  dir: string;
  remote: string;
  work: string;
  facts(): Promise<CheckoutFacts>;
  /** Publishes with the staging made from the checkout as it is; `agent` then acts as the agent would. */
  publish(o?: Partial<PublishOptions> & { agent?: () => void; log?: (line: string) => void }): Promise<string | undefined>;
  remove(): void;
}

export function publishRepo(): PublishRepo {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-publish-'));
  const remote = path.join(dir, 'remote.git');
  const work = path.join(dir, 'work');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote]);
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  fs.writeFileSync(path.join(work, 'README.md'), 'readme\n');
  sh(work, 'add', '-A');
  sh(work, 'commit', '-q', '-m', 'first');
  sh(work, 'remote', 'add', 'origin', remote);
  sh(work, 'push', '-q', 'origin', 'main');
  const facts = () => readCheckout(work, { pathEnv: process.env.PATH, home: path.join(dir, 'home') });
  return {
    dir,
    remote,
    work,
    facts,
    async publish(o = {}) {
      const { agent, ...over } = o;
      const checkout = over.checkout ?? (await facts());
      const staging = await Staging.prepare(checkout, { parent: path.join(dir, 'recall'), pathEnv: process.env.PATH, recallDirs: [] });
      agent?.();
      return publishChanges({ ...publishOptions(checkout), staging, ...over });
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** What the action hands publish for an issue's run (issue #7, base main), but the record of the checkout. */
export function publishOptions(checkout: CheckoutFacts): Omit<PublishOptions, 'staging'> {
  return {
    checkout,
    target: { kind: 'issue', number: 7, base: 'main' },
    enabled: true,
    branch: 'recall/issue-7-1-1',
    title: 'Fix',
    links: [],
    answer: 'Done.',
    credentials: () => [],
    token: '',
    gitHubChanges: false,
    tokenLogin: async () => 'github-actions[bot]',
    defaultBranch: async () => 'main',
    branchProtected: async () => false,
    recallDirs: [],
    openPull: async () => ({ number: 8, url: 'https://example.invalid/8' }),
    commitUrl: (sha) => sha,
    log: () => undefined,
  };
}
