/**
 * Everything an end-to-end test of the bundled action needs, started on loopback ports chosen at
 * run time: the scripted model, the cache service, the fake GitHub API, a git checkout and a
 * runner machine. `stop()` stops all of it and removes the files, even after a failed test.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createArtifactService, type ArtifactService } from './artifact-service.js';
import { startCacheService, type CacheService } from './cache-service.js';
import { startFakeGitHub, type FakeGitHub } from './fake-github.js';
import { startFakeModel, type FakeModel } from './fake-model.js';
import { createMachine, REPO_ROOT, runAction, runnerLayout, stopRunningSteps, type ActionRun, type ActionRunOptions, type Machine } from './runner.js';
import type { RunnerKind } from './runner-env.js';

export interface World {
  root: string;
  /**
   * The folder holding the repository the agent works in: GITHUB_WORKSPACE itself unless the
   * layout put the checkout elsewhere (see CheckoutLayout); for `inside-repository`, the
   * workspace, which has no `.git`.
   */
  checkout: string;
  model: FakeModel;
  cache: CacheService;
  /** The artifact service on the cache service's host (the results service serves both on GitHub). */
  artifacts: ArtifactService;
  github: FakeGitHub;
  machine: Machine;
  /** Inputs that point the action at the scripted model. */
  modelInputs: Record<string, string>;
  /** Step env: cache service, GitHub API, offline OpenCode. */
  stepEnv(): Record<string, string>;
  /** Run the bundled action on any event. */
  runEvent(eventName: string, payload: Record<string, unknown>, runId: string, extra?: Partial<ActionRunOptions>): Promise<ActionRun>;
  /** Run the bundled action on an `issues: opened` event. */
  openIssue(runId: string, issue: { number: number; title: string; body: string }, extra?: Partial<ActionRunOptions>): Promise<ActionRun>;
  stop(): Promise<void>;
}

export function issuesOpenedPayload(issue: { number: number; title: string; body: string }): Record<string, unknown> {
  return {
    action: 'opened',
    issue: {
      number: issue.number,
      title: issue.title,
      body: issue.body,
      state: 'open',
      user: { login: 'octocat', type: 'User' },
      author_association: 'OWNER',
      html_url: `https://github.com/octo-org/webapp/issues/${issue.number}`,
    },
    repository: { full_name: 'octo-org/webapp', name: 'webapp', owner: { login: 'octo-org' }, default_branch: 'main' },
    sender: { login: 'octocat', type: 'User' },
  };
}

/**
 * A checkout as `actions/checkout` leaves it by default: depth 1, so its only commit is the root.
 * Called again, it stands for the next run's clone after a new commit: the root commit (which
 * OpenCode takes as the project id) is a different one.
 */
export function makeCheckout(dir: string, commitMessage = 'initial'): void {
  fs.rmSync(path.join(dir, '.git'), { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'README.md'), `# webapp\n\n${commitMessage}\n`);
  fs.writeFileSync(path.join(dir, 'src', 'auth.ts'), "export const cookie = { sameSite: 'none' };\n");
  const git = (...args: string[]) => testGit(dir, ...args);
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', commitMessage);
}

/**
 * A place for worlds outside /tmp, laid out like a runner's disk: the sandbox gives the agent an
 * empty /tmp of its own, so only outside /tmp do its other mounts (RUNNER_TEMP hidden, the rest
 * read-only) show. The repository's node_modules, or the home directory when the clone itself is
 * under /tmp (as a CI checkout may be).
 */
export const OUTSIDE_TMP = [path.join(REPO_ROOT, 'node_modules', '.recall-e2e'), path.join(os.homedir(), '.cache', 'recall-e2e')].find(
  (dir) => !['/tmp', '/var/tmp', '/dev/shm'].some((scratch) => {
    const real = (p: string) => {
      try {
        return fs.realpathSync(p);
      } catch {
        return p;
      }
    };
    return `${real(path.dirname(path.dirname(dir)))}/`.startsWith(`${real(scratch)}/`);
  }),
) ?? path.join(os.homedir(), '.cache', 'recall-e2e');

/**
 * Where the checkout is on the runner, as workflows and runners lay it out:
 *  - workspace: actions/checkout's default, the repository at GITHUB_WORKSPACE;
 *  - folder: actions/checkout with `path:`, the repository in that folder of the workspace;
 *  - worktree: GITHUB_WORKSPACE is a `git worktree add` of a clone beside it (its `.git` is a file);
 *  - inside-repository: GITHUB_WORKSPACE holds the files but no `.git`, and the whole runner
 *    folder (work folder, RUNNER_TEMP, home) lies inside another repository, as on a self-hosted
 *    runner installed in a clone. That repository is the world's root.
 */
export type CheckoutLayout = { kind: 'workspace' } | { kind: 'folder'; folder: string } | { kind: 'worktree' } | { kind: 'inside-repository' };

const testGit = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' },
    stdio: 'ignore',
  });

/** Lays the checkout out in `root` for `layout`; the folder that holds it. */
function layOut(root: string, workspace: string, layout: CheckoutLayout): string {
  switch (layout.kind) {
    case 'workspace':
      makeCheckout(workspace);
      return workspace;
    case 'folder': {
      const dir = path.join(workspace, layout.folder);
      makeCheckout(dir);
      return dir;
    }
    case 'worktree': {
      const clone = path.join(root, 'clone');
      makeCheckout(clone);
      testGit(clone, 'worktree', 'add', '-q', '--detach', workspace);
      return workspace;
    }
    case 'inside-repository': {
      makeCheckout(workspace);
      fs.rmSync(path.join(workspace, '.git'), { recursive: true, force: true });
      fs.writeFileSync(path.join(root, 'runner.md'), 'The runner is installed in this clone.\n');
      testGit(root, 'init', '-q', '-b', 'main');
      testGit(root, 'add', 'runner.md');
      testGit(root, 'commit', '-q', '-m', 'runner');
      return workspace;
    }
  }
}

export async function startWorld(o: { baseDir?: string; layout?: CheckoutLayout; runner?: RunnerKind } = {}): Promise<World> {
  const base = o.baseDir ?? os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  const root = fs.mkdtempSync(path.join(base, 'recall-e2e-'));
  const started: Array<{ stop(): Promise<void> }> = [];
  try {
    const model = await startFakeModel();
    started.push(model);
    const artifacts = createArtifactService();
    const cache = await startCacheService({ dir: path.join(root, 'cache-service'), token: artifacts.token, routes: artifacts.routes });
    started.push(cache);
    const github = await startFakeGitHub({ caches: cache });
    started.push(github);
    github.setPermission('octocat', 'admin');
    // The runner's home, work folder and workspace, as a hosted runner (or a self-hosted one) lays them out.
    const runner = runnerLayout(root, o.runner);
    const workspace = runner.workspace;
    fs.mkdirSync(workspace, { recursive: true });
    const checkout = layOut(root, workspace, o.layout ?? { kind: 'workspace' });
    const machine = createMachine(root, runner);
    const world: World = {
      root,
      checkout,
      model,
      cache,
      artifacts,
      github,
      machine,
      modelInputs: { model: 'fake/scripted', 'opencode-config': JSON.stringify(model.providerConfig()) },
      stepEnv: () => ({
        ...world.cache.env(),
        GITHUB_API_URL: github.url,
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        npm_config_registry: 'http://127.0.0.1:9/',
      }),
      runEvent: (eventName, payload, runId, extra = {}) =>
        runAction({
          machine,
          eventName,
          payload,
          runId,
          ...extra,
          inputs: { ...world.modelInputs, ...extra.inputs },
          env: { ...world.stepEnv(), ...extra.env },
        }),
      openIssue: (runId, issue, extra = {}) => {
        github.addIssue({ number: issue.number, title: issue.title, body: issue.body, author: 'octocat' });
        return world.runEvent('issues', issuesOpenedPayload(issue), runId, extra);
      },
      stop: async () => {
        stopRunningSteps(machine);
        await Promise.allSettled(started.map((s) => s.stop()));
        fs.rmSync(root, { recursive: true, force: true });
      },
    };
    return world;
  } catch (error) {
    await Promise.allSettled(started.map((s) => s.stop()));
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
