/**
 * Where a local run keeps a project's memory by default (src/cli/project-memory.ts): the platform's
 * state folder, outside the checkout, one folder per project.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { projectKey, projectMemoryPath, stateFolder } from '../../src/cli/project-memory.js';

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

describe("a local run's memory folder", () => {
  it("is the platform's state folder for Recall", () => {
    expect(stateFolder({ name: 'linux', env: { HOME: '/home/ada' }, home: '/nowhere' })).toBe('/home/ada/.local/state/recall');
    expect(stateFolder({ name: 'linux', env: { HOME: '/home/ada', XDG_STATE_HOME: '/var/state/ada' }, home: '/nowhere' })).toBe('/var/state/ada/recall');
    // The XDG spec: a relative value is ignored.
    expect(stateFolder({ name: 'linux', env: { HOME: '/home/ada', XDG_STATE_HOME: 'state' }, home: '/nowhere' })).toBe('/home/ada/.local/state/recall');
    expect(stateFolder({ name: 'freebsd', env: {}, home: '/usr/home/ada' })).toBe('/usr/home/ada/.local/state/recall');
    expect(stateFolder({ name: 'darwin', env: { HOME: '/Users/ada', XDG_STATE_HOME: '/x' }, home: '/nowhere' })).toBe('/Users/ada/Library/Application Support/recall');
    expect(stateFolder({ name: 'win32', env: { LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local' }, home: 'C:\\nowhere' })).toBe('C:\\Users\\ada\\AppData\\Local\\recall');
    expect(stateFolder({ name: 'win32', env: { USERPROFILE: 'C:\\Users\\ada' }, home: 'C:\\nowhere' })).toBe('C:\\Users\\ada\\AppData\\Local\\recall');
    expect(stateFolder({ name: 'win32', env: {}, home: 'C:\\Users\\bob' })).toBe('C:\\Users\\bob\\AppData\\Local\\recall');
  });

  it('is keyed by the project: a readable name and a short hash of the real path, so two checkouts of one name never share', () => {
    expect(projectKey('/home/ada/src/webapp')).toBe(`webapp-${hash('/home/ada/src/webapp')}`);
    expect(projectKey('/home/ada/src/webapp')).not.toBe(projectKey('/home/ada/work/webapp'));
    expect(projectKey('/srv/My Project (copy)')).toBe(`My-Project-copy--${hash('/srv/My Project (copy)')}`);
    expect(projectKey('/srv/.hidden')).toBe(`hidden-${hash('/srv/.hidden')}`);
    expect(projectKey('/')).toBe(`project-${hash('/')}`);
    expect(projectKey('C:\\src\\webapp')).toBe(`webapp-${hash('C:\\src\\webapp')}`);
    expect(projectKey(`/src/${'x'.repeat(80)}`)).toBe(`${'x'.repeat(40)}-${hash(`/src/${'x'.repeat(80)}`)}`);
  });

  it('joins the two', () => {
    expect(projectMemoryPath('/home/ada/src/webapp', { name: 'linux', env: { HOME: '/home/ada' }, home: '/' })).toBe(`/home/ada/.local/state/recall/memory/webapp-${hash('/home/ada/src/webapp')}`);
    expect(projectMemoryPath('C:\\src\\webapp', { name: 'win32', env: { LOCALAPPDATA: 'D:\\local' }, home: 'C:\\' })).toBe(`D:\\local\\recall\\memory\\webapp-${hash('C:\\src\\webapp')}`);
  });
});
