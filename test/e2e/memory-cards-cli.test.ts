/**
 * `recall memory cards` as it ships (dist/cli/index.js), over memory the bundled action saved with
 * cards off: it writes the cards records lack through the real OpenCode and the scripted model,
 * saves each into the snapshot as it is made (a second call continues), prints them with tokens
 * and cost, and the next run of the action restores the memory (signed again) with the cards kept.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshRunner, REPO_ROOT } from '../harness/runner.js';
import { spawned } from '../harness/spawned.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';
import { startWorld, type World } from '../harness/world.js';
import { plainText } from '../harness/index-file.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.stop();
});

/** The CLI from a shell, with the model's key-free scripted provider and OpenCode offline. */
function recall(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return spawned(process.execPath, [CLI, ...args], {
    cwd: world.root,
    env: { ...process.env, HOME: path.join(world.root, 'home'), OPENCODE_DISABLE_MODELS_FETCH: '1', npm_config_registry: 'http://127.0.0.1:9/', ...env },
  });
}

/** The records of the newest snapshot in a memory-path (by the time its manifest says, as a restore takes it). */
function newestRecords(memoryPath: string): Array<Record<string, any>> {
  const savedAt = (d: string) => Date.parse(JSON.parse(fs.readFileSync(path.join(memoryPath, d, 'recall-manifest.json'), 'utf8')).savedAt);
  const newest = fs.readdirSync(memoryPath).filter((d) => !d.startsWith('.')).sort((a, b) => savedAt(a) - savedAt(b)).at(-1)!;
  return (JSON.parse(plainText(path.join(memoryPath, newest, 'recall-index.json'))) as { records: Array<Record<string, any>> }).records;
}

describe('recall memory cards', () => {
  it('writes the cards records lack, each saved as it is made, resumable, with tokens and cost', async () => {
    fs.mkdirSync(path.join(world.root, 'home'), { recursive: true });
    const store = path.join(world.root, 'memory-path');
    const inputs = { 'memory-backend': 'directory', 'memory-path': store, 'memory-cards': 'false' };
    world.model.script({ text: 'The SAML session cookie lacks Secure, so Safari drops it after the redirect.' });
    expect((await world.openIssue('9601', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' }, { inputs })).main.exitCode).toBe(0);
    freshRunner(world.machine);
    world.model.script({ text: 'The CSV writer never writes the header row.' });
    expect((await world.openIssue('9602', { number: 2, title: 'CSV export has no header row', body: 'The first line of the export is data.' }, { inputs })).main.exitCode).toBe(0);
    expect(newestRecords(store).map((r) => r.card)).toEqual([undefined, undefined]);
    expect(world.model.cardRequests()).toEqual([]);

    const config = JSON.stringify(world.model.providerConfig());
    const card = (plain: string) => ({ text: JSON.stringify({ plain, phrasings: ['a', 'b', 'c', 'd'], components: [], cause: '', fix: '' }), usage: { prompt: 300, completion: 50 } });
    world.model.scriptCard(card('Exported spreadsheets miss their column titles'));
    const first = await recall(['memory', 'cards', '--store', store, '--model', 'fake/scripted', '--opencode-config', config, '--limit', '1']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('run-9602-1  Exported spreadsheets miss their column titles  (fake/scripted; 300 tokens in, 50 out, $0.0000)');
    expect(first.stdout).toContain('1 card(s) written, 0 not; 300 tokens in, 50 out, $0.0000. 1 record(s) still have none: run it again to continue.');
    expect(newestRecords(store).find((r) => r.id === 'run-9602-1')!.card).toMatchObject({ plain: 'Exported spreadsheets miss their column titles', by: 'fake/scripted', tokens: { input: 300, output: 50 } });
    // The card model read the record's request and answer, with no tool offered.
    const [asked] = world.model.cardRequests();
    expect(asked!.messageText()).toContain('The CSV writer never writes the header row.');
    expect((asked!.body as { tools?: unknown[] }).tools ?? []).toEqual([]);

    // A second call continues with the record still without one; a third has nothing to do.
    world.model.scriptCard(card('Safari users cannot stay signed in'));
    const second = await recall(['memory', 'cards', '--store', store, '--opencode-config', config], { RECALL_MODEL: 'fake/scripted' });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^run-9601-1  Safari users cannot stay signed in/m);
    expect(second.stdout).not.toContain('run-9602-1');
    expect(second.stdout).toContain('Every record has a card.');
    const third = await recall(['memory', 'cards', '--store', store, '--opencode-config', config], { RECALL_MODEL: 'fake/scripted' });
    expect(third.stdout).toContain('Every record has a card (2 record(s)); nothing to write.');
    expect(world.model.cardRequests()).toHaveLength(2);

    // The next run restores that memory (its manifest written again) and keeps the cards.
    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const next = await world.openIssue('9603', { number: 3, title: 'Dark mode chart labels unreadable', body: 'Axis labels are black on black.' }, { inputs });
    expect(next.outputs['memory-status']).toBe('hit');
    expect(next.warnings).toEqual([]);
    expect(newestRecords(store).filter((r) => r.card).map((r) => r.id).sort()).toEqual(['run-9601-1', 'run-9602-1']);
  });

  it('says how to call it, and what to do when the store cannot be written', async () => {
    const help = await recall(['memory', 'cards', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: recall memory cards \[--store PATH\] \[--model provider\/model\] \[--limit N\]/);
    const missing = await recall(['memory', 'cards']);
    expect(missing.code).toBe(2);
    // Without --store: the local memory of the repository it runs in, which this home has none of.
    expect(missing.stderr).toMatch(/has no local memory yet \(recall run keeps it in .*\): run recall run there first, or name a memory with --store PATH/);
    const archive = path.join(world.root, 'memory.tzst');
    fs.writeFileSync(archive, 'not really');
    const file = await recall(['memory', 'cards', '--store', archive]);
    expect([file.code, file.stderr.trim()]).toEqual([2, `recall: --store ${archive} is an archive file, which is never changed in place: add --out NEW_FILE to write the changed memory as a new archive (recall memory cards --help shows how)`]);
    const unreadable = await recall(['memory', 'cards', '--store', archive, '--out', path.join(world.root, 'new.tzst')]);
    expect([unreadable.code, unreadable.stderr.trim().split('\n').length]).toEqual([1, 1]);
    expect(unreadable.stderr).toContain(`--store ${archive} is a file Recall cannot read as an Actions cache archive (neither zstd nor gzip)`);
    expect(fs.existsSync(path.join(world.root, 'new.tzst'))).toBe(false);
    const badModel = await recall(['memory', 'cards', '--store', world.root, '--model', 'haiku']);
    expect(badModel.code).toBe(2);
    expect(badModel.stderr).toMatch(/"haiku" is not in provider\/model form/);
  });
  it('import --cards writes a card for each record the import added, and none for what was there (issue 24)', async () => {
    fs.mkdirSync(path.join(world.root, 'home'), { recursive: true });
    const store = path.join(world.root, 'memory');
    writeStore(store, [{ id: sessionId('old'), said: ['an older question'] }]);
    const jsonl = path.join(world.root, 'legacy.jsonl');
    const line = (id: string, title: string) => JSON.stringify({ id, kind: 'run', title, request: `${title}: it fails.`, answer: `Fixed ${title}.`, createdAt: '2026-10-01T00:00:00Z' });
    fs.writeFileSync(jsonl, `${line('legacy-1', 'Upload stalls at 99%')}\n${line('legacy-2', 'Emails sent twice')}\n`);
    const config = JSON.stringify(world.model.providerConfig());
    const card = (plain: string) => ({ text: JSON.stringify({ plain, phrasings: ['a', 'b', 'c', 'd'], components: [], cause: '', fix: '' }), usage: { prompt: 200, completion: 40 } });
    world.model.scriptCard(card('Big uploads never finish'), card('People get every notification twice'));
    const res = await recall(['memory', 'import', '--store', store, '--file', jsonl, '--cards', '--model', 'fake/scripted', '--opencode-config', config]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Added 2, kept 0, refused 0 \(of 2\)\.$/m);
    expect(res.stdout).toContain('2 card(s) written, 0 not; 400 tokens in, 80 out');
    const records = (JSON.parse(plainText(path.join(store, 'recall-index.json'))) as { records: Array<Record<string, any>> }).records;
    expect(Object.fromEntries(records.map((r) => [r.id, r.card?.plain]))).toEqual({ 'legacy-1': expect.any(String), 'legacy-2': expect.any(String), [`session-${sessionId('old')}`]: undefined });
    expect(world.model.cardRequests().map((r) => r.messageText()).join('\n')).not.toContain('an older question');
  });
});
