/**
 * What the agent may do: the OpenCode config Recall writes for each policy, and the check of the
 * rules OpenCode reports back (GET /agent). The e2e tests run both against the real OpenCode.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../harness/runner.js';
import { agentConfig, policyViolations, unansweredAsks, wildcard, type AgentRules } from '../../src/agent/policy.js';

/** OpenCode's evaluation (1.18.33): defaults, then top-level permission, then the agent's own, last rule wins. */
function rulesOf(config: Record<string, any>, agent: string): AgentRules {
  const toRules = (p: unknown) =>
    Object.entries(typeof p === 'string' ? { '*': p } : ((p ?? {}) as Record<string, unknown>)).flatMap(([permission, v]) =>
      typeof v === 'string' ? [{ permission, pattern: '*', action: v }] : Object.entries(v as Record<string, string>).map(([pattern, action]) => ({ permission, pattern, action })),
    );
  const defaults = [{ permission: '*', pattern: '*', action: 'allow' }, { permission: 'external_directory', pattern: '*', action: 'ask' }, { permission: 'external_directory', pattern: '/tmp/opencode/*', action: 'allow' }];
  return { name: agent, permission: [...defaults, ...toRules(config.permission), ...toRules(config.agent?.[agent]?.permission)] };
}

describe("the agent's OpenCode config", () => {
  it('keeps the user config, sets the model, and turns autoupdate and sharing off', () => {
    const config = agentConfig({ provider: { x: {} }, autoupdate: true, share: 'auto' }, { providerID: 'x', modelID: 'm' });
    expect(config).toMatchObject({ provider: { x: {} }, model: 'x/m', autoupdate: false, share: 'disabled' });
  });

  it("turns OpenCode's undo snapshots off (a copy of the work tree at every step), unless the user's config turns them on", () => {
    expect(agentConfig({}, undefined).snapshot).toBe(false);
    expect(agentConfig({}, undefined, 'read-only').snapshot).toBe(false);
    expect(agentConfig({ snapshot: true }, undefined).snapshot).toBe(true);
  });

  it('denies questions and writes outside the checkout unless the user allows them', () => {
    expect(agentConfig({}, undefined).permission).toMatchObject({ external_directory: 'deny', question: 'deny' });
    expect(agentConfig({ permission: { external_directory: 'allow' } }, undefined).permission).toMatchObject({ external_directory: 'allow' });
  });

  it("decides what OpenCode would stop to ask about (a loop, a .env file), since nobody can answer: deny, or allow when a person says so", () => {
    expect(agentConfig({}, undefined).permission).toEqual({
      external_directory: 'deny',
      question: 'deny',
      doom_loop: 'deny',
      read: { '*.env': 'deny', '*.env.*': 'deny', '*.env.example': 'allow' },
    });
    expect(agentConfig({}, undefined, 'full', [], 'allow').permission).toMatchObject({ doom_loop: 'allow', read: { '*.env': 'allow', '*.env.*': 'allow' } });
  });

  it("decides the user's own asks the same way, and keeps the user's own decisions pattern by pattern", () => {
    const user = { permission: { bash: { '*': 'allow', 'git push*': 'ask' }, read: { 'secrets/*': 'deny', '*.env': 'allow' }, webfetch: 'ask' }, agent: { build: { permission: { edit: 'ask' } } } };
    const config = agentConfig(user, undefined);
    expect(config.permission).toMatchObject({ bash: { '*': 'allow', 'git push*': 'deny' }, webfetch: 'deny', read: { '*.env': 'allow', '*.env.*': 'deny', 'secrets/*': 'deny' } });
    expect((config.agent as Record<string, { permission: unknown }>).build!.permission).toEqual({ edit: 'deny' });
    expect(JSON.stringify(agentConfig(user, undefined, 'no-shell'))).not.toContain('"ask"');
  });

  it('finds an ask no later rule decides, as OpenCode would leave it waiting', () => {
    const rules = (permission: Array<[string, string, string]>) => [{ name: 'build', permission: permission.map(([p, pattern, action]) => ({ permission: p, pattern, action })) }];
    expect(unansweredAsks(rules([['read', '*.env', 'ask'], ['read', '*.env', 'deny']]))).toEqual([]);
    expect(unansweredAsks(rules([['read', '*.env', 'ask'], ['read', '*', 'allow']]))).toEqual([]);
    expect(unansweredAsks(rules([['read', '*.env', 'ask'], ['read', 'src/*', 'deny']]))).toEqual(['build: read *.env']);
    expect(unansweredAsks(rules([['doom_loop', '*', 'ask'], ['*', '*', 'deny']]))).toEqual([]);
    expect(unansweredAsks(rules([['doom_loop', '*', 'ask'], ['edit', '*', 'deny']]))).toEqual(['build: doom_loop *']);
  });

  it("no-shell: the agent keeps editing the checkout but not its .git, on top of the user's own rules", () => {
    const config = agentConfig({ permission: { edit: { '*.lock': 'deny' } } }, undefined, 'no-shell');
    const editOf = (file: string) => rulesOf(config, 'build').permission.filter((r) => wildcard('edit', r.permission) && wildcard(file, r.pattern)).at(-1)?.action;
    expect(editOf('src/a.ts')).toBe('allow');
    expect(editOf('yarn.lock')).toBe('deny');
    for (const file of ['.git/config', '.git/hooks/post-checkout', '/home/runner/work/app/app/.git/config', 'vendor/lib/.git/config']) expect(editOf(file), file).toBe('deny');
  });

  it(".git stays closed by every name macOS and Windows open it by (OpenCode 1.18.33 matches the path as given, with case, on macOS), and names that only start like it stay open", () => {
    const ofRules = (rules: AgentRules, tool: string, file: string) => rules.permission.filter((r) => wildcard(tool, r.permission) && wildcard(file, r.pattern)).at(-1)?.action;
    const variants = ['.GIT/config', '.Git/hooks/x', 'sub/.gIt/config', '.gIT', '/Users/runner/work/app/app/.GIT/config', '.git./config', '.git. ./config', '.git /config', '.git::$INDEX_ALLOCATION/config', 'GIT~1/config', 'git~1/hooks/x', 'sub/GIT~1/config'];
    const open = ['.github/workflows/ci.yml', '.gitignore', '.gitattributes', '.gitmodules', '.git-blame-ignore-revs', 'src/digit.ts', 'docs/git/intro.md'];
    for (const policy of ['no-shell', 'read-only'] as const) {
      const config = agentConfig({ permission: { read: { '.GIT/*': 'allow' }, edit: { '*': 'allow' } } }, undefined, policy);
      for (const agent of ['build', 'explore']) {
        const rules = rulesOf(config, agent);
        expect(policyViolations([rules], policy)).toEqual([]);
        for (const file of variants) {
          expect(ofRules(rules, 'read', file), `${policy} ${agent} read ${file}`).toBe('deny');
          expect(ofRules(rules, 'edit', file), `${policy} ${agent} edit ${file}`).toBe('deny');
        }
        for (const file of open) expect(ofRules(rules, 'read', file), `${policy} ${agent} read ${file}`).toBe('allow');
      }
    }
    // The check itself tries those names: the rules as they were (lower case only) fail it.
    const before: AgentRules = { name: 'build', permission: [{ permission: '*', pattern: '*', action: 'allow' }, { permission: 'bash', pattern: '*', action: 'deny' }, { permission: 'external_directory', pattern: '*', action: 'deny' }, ...['read', 'edit'].flatMap((permission) => ['.git', '.git/*', '*/.git', '*/.git/*'].map((pattern) => ({ permission, pattern, action: 'deny' })))] };
    expect(policyViolations([before], 'no-shell')).toEqual(['agent "build" can read .GIT/config', 'agent "build" can edit .GIT/config']);
  });

  it('no-shell: every agent loses bash and the outside, whatever the user config grants where', () => {
    const user = { permission: { bash: 'allow', external_directory: 'allow' }, agent: { build: { permission: { bash: 'allow' } }, helper: { tools: { bash: true } } } };
    const config = agentConfig(user, undefined, 'no-shell');
    for (const agent of ['build', 'plan', 'general', 'explore', 'helper']) expect(policyViolations([rulesOf(config, agent)], 'no-shell')).toEqual([]);
    expect(policyViolations([rulesOf(agentConfig(user, undefined, 'full'), 'build')], 'no-shell')).toEqual(expect.arrayContaining([expect.stringMatching(/can use bash/)]));
  });

  it("read-only: a fork's run keeps only reading and searching, for every agent, and loads no LSP, formatter or references", () => {
    const user = { permission: { '*': 'allow' }, agent: { build: { permission: { bash: 'allow', edit: 'allow', webfetch: 'allow' } } }, references: { x: { path: '/etc' } } };
    const config = agentConfig(user, undefined, 'read-only');
    expect(config).toMatchObject({ lsp: false, formatter: false });
    expect(config).not.toHaveProperty('references');
    for (const agent of ['build', 'plan', 'general', 'explore', 'title']) expect(policyViolations([rulesOf(config, agent)], 'read-only')).toEqual([]);
    const readOf = (file: string) => rulesOf(config, 'build').permission.filter((r) => wildcard('read', r.permission) && wildcard(file, r.pattern)).at(-1)?.action;
    expect(readOf('src/a.ts')).toBe('allow');
    expect(readOf('.git/config')).toBe('deny'); // the checkout's token may be there
  });

  it('a tool turned off for the run (grep, when .git holds credentials and no sandbox) is gone for every agent, and checked', () => {
    const user = { permission: { grep: 'allow' }, agent: { build: { permission: { grep: 'allow' } } } };
    for (const policy of ['no-shell', 'read-only'] as const) {
      const config = agentConfig(user, undefined, policy, ['grep']);
      for (const agent of ['build', 'explore']) expect(policyViolations([rulesOf(config, agent)], policy, ['grep'])).toEqual([]);
      expect(policyViolations([rulesOf(agentConfig(user, undefined, policy), 'build')], policy, ['grep'])).toEqual(['agent "build" can use grep']);
    }
    expect(agentConfig(user, undefined, 'full', ['grep']).permission).toMatchObject({ grep: 'allow' }); // a shell reads .git anyway: nothing to turn off
  });

  it('the check names what an agent can still do', () => {
    const open: AgentRules = { name: 'build', permission: [{ permission: '*', pattern: '*', action: 'allow' }] };
    expect(policyViolations([open], 'read-only')).toEqual(expect.arrayContaining(['agent "build" can use bash', 'agent "build" can use webfetch', 'agent "build" can use skill', 'agent "build" can reach /proc/1/environ outside the checkout']));
    // A per-pattern rule keeps the tool in the model's list: not good enough.
    const patterned: AgentRules = { name: 'plan', permission: [{ permission: 'bash', pattern: '*', action: 'deny' }, { permission: 'bash', pattern: 'git *', action: 'allow' }, { permission: 'external_directory', pattern: '*', action: 'deny' }] };
    expect(policyViolations([patterned], 'no-shell')).toEqual(['agent "plan" can use bash', 'agent "plan" can read .git/config', 'agent "plan" can edit .git/config']);
    expect(policyViolations([open], 'full')).toEqual([]);
  });

  it("matches OpenCode's wildcards", () => {
    expect(wildcard('bash', '*')).toBe(true);
    expect(wildcard('/proc/1/environ', '/proc/*')).toBe(true);
    expect(wildcard('git', 'git *')).toBe(true);
    expect(wildcard('gitx', 'git *')).toBe(false);
    expect(wildcard('a.b', 'a?b')).toBe(true);
    expect(wildcard('axb', 'a.b')).toBe(false);
    expect(wildcard('a.git', '*.git *')).toBe(true); // "( .*)?", as OpenCode writes it: the rest of the pattern keeps its wildcards
    expect(wildcard('.g', '.[gG]')).toBe(false); // `[` is itself, not a class
    expect(wildcard('.git\\config', '.git/*')).toBe(true); // backslashes read as slashes
    expect(wildcard('.GIT/config', '.git/*')).toBe(false); // case counts (OpenCode folds it on Windows only)
  });
});

describe("the model providers' variables", () => {
  it('are the ones the pinned OpenCode binary lists (scripts/provider-env.mjs --check)', () => {
    const out = execFileSync(process.execPath, ['scripts/provider-env.mjs', '--check'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(out).toMatch(/provider-env: \d{3} providers/);
  });
});
