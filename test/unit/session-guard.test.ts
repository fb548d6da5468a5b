/**
 * The guard on sessions Recall did not start (agent/outsiders.ts), over a stand-in for OpenCode's
 * client: the events it is sent, the aborts it asks for. The second attacker review of stop 43 made a
 * session name Recall's as its parent, in the checkout or in another directory.
 */
import { describe, expect, it } from 'vitest';
import { SessionGuard } from '../../src/agent/outsiders.js';

const CHECKOUT = '/work/app';

/** A client whose event stream yields what the test pushes, and which records every abort. */
function standIn() {
  const queue: unknown[] = [];
  let wake: (() => void) | undefined;
  const aborted: string[] = [];
  const statuses: Record<string, { type: string }> = {};
  const client = {
    global: {
      event: async () => ({
        stream: (async function* () {
          for (;;) {
            while (queue.length) yield queue.shift();
            await new Promise<void>((r) => (wake = r));
          }
        })(),
      }),
    },
    session: {
      abort: async ({ sessionID }: { sessionID: string }) => (aborted.push(sessionID), { data: true }),
      status: async () => ({ data: statuses }),
    },
  };
  const send = async (directory: string, type: string, properties: Record<string, unknown>) => {
    queue.push({ directory, payload: { type, properties } });
    wake?.();
    await new Promise((r) => setTimeout(r, 5));
  };
  return { client, aborted, statuses, send };
}

/** A started guard over a stand-in whose stream has connected, and what it warned of. */
async function started() {
  const s = standIn();
  const warned: string[] = [];
  const guard = new SessionGuard(s.client as never, CHECKOUT, (id) => warned.push(id));
  guard.start();
  await s.send(CHECKOUT, 'server.connected', {});
  return { ...s, guard, warned };
}

describe('a session that names Recall\'s as its parent', () => {
  it('works while Recall runs its parent only in the checkout; elsewhere it is stopped, and said', async () => {
    const s = await started();
    const { guard, warned } = s;
    await guard.using('ses_recall', async () => {
      await s.send(CHECKOUT, 'session.created', { info: { id: 'ses_child', parentID: 'ses_recall' } });
      await s.send(CHECKOUT, 'session.status', { sessionID: 'ses_child', status: { type: 'busy' } });
      await s.send('/tmp/elsewhere', 'session.created', { info: { id: 'ses_far', parentID: 'ses_recall' } });
      await s.send('/tmp/elsewhere', 'session.status', { sessionID: 'ses_far', status: { type: 'busy' } });
    });
    expect(s.aborted).toEqual(['ses_far']);
    expect(warned).toEqual(['ses_far']);
    guard.stop();
  });

  it("still working once Recall's turn is over, it is stopped, and said", async () => {
    const s = await started();
    const { guard, warned } = s;
    await guard.using('ses_recall', async () => {
      await s.send(CHECKOUT, 'session.created', { info: { id: 'ses_child', parentID: 'ses_recall' } });
      await s.send(CHECKOUT, 'session.status', { sessionID: 'ses_child', status: { type: 'busy' } });
    });
    s.statuses.ses_child = { type: 'busy' };
    expect(await guard.stopOutsiders(CHECKOUT)).toEqual(['ses_child']);
    expect(warned).toEqual(['ses_child']);
    guard.stop();
  });
});
