/**
 * The per-run limits of the agent's tools hold when the model calls them side by side in one step
 * (attacker review, stop 42): post_message posts at most 5 messages and dispatch asks at most 20
 * times. Both counted after their first wait, so 12 simultaneous posts all went out, and 30
 * simultaneous dispatches were all asked.
 */
import { afterEach, expect, it } from 'vitest';
import { Dispatcher } from '../../src/agent/tools/dispatch.js';
import { ToolHost } from '../../src/agent/tools/tool-host.js';
import type { AgentServer, Task } from '../../src/ports.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hosts: ToolHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
});

it('twelve post_message calls at once: five are posted, the rest refused; a message GitHub refused is given back', async () => {
  const posted: string[] = [];
  let refuseNext = true;
  const poster = async (m: { body: string }) => {
    await sleep(50);
    if (refuseNext) {
      refuseNext = false;
      throw new Error('Issues are disabled for this repository');
    }
    posted.push(m.body);
    return `https://github.com/o/r/issues/${posted.length}`;
  };
  const task = { threadKey: 'schedule-nightly', kind: 'job', title: 'Nightly', query: { title: 'Nightly', text: '' } } as unknown as Task;
  const host = new ToolHost({ task, runId: '9-1', readOnly: false, poster } as never);
  hosts.push(host);
  await expect(host.answer('post_message', { issue: 1, body: 'first, refused by GitHub' })).rejects.toThrow(/did not take the message/);
  const settled = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => host.answer('post_message', { issue: 1, body: `report ${i}` })));
  expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(5);
  expect(posted).toHaveLength(5);
  expect(settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual(Array(7).fill(expect.stringMatching(/already posted 5 messages/)));
});

it('thirty dispatch calls at once: twenty are asked, the rest refused', async () => {
  let asked = 0;
  const server = {
    models: async () => (await sleep(30), { cheap: ['small'] }),
    createChildSession: async () => `ses_child${asked}`,
    ask: async () => {
      asked++;
      await sleep(20);
      return { text: 'ok', tokens: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 };
    },
    deleteSession: async () => undefined,
  } as unknown as AgentServer;
  const dispatcher = new Dispatcher({ models: [{ providerID: 'cheap', modelID: 'small' }], timeoutMs: 5_000, env: {} });
  const stopped = new AbortController().signal;
  const settled = await Promise.allSettled(Array.from({ length: 30 }, () => dispatcher.dispatch(server, 'ses_parent', { model: 'cheap/small', prompt: 'Summarise the diff.' }, stopped)));
  expect(asked).toBe(20);
  expect(settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual(Array(10).fill(expect.stringMatching(/already dispatched 20 prompts/)));
});
