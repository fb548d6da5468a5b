/**
 * A fake GitHub REST API on 127.0.0.1 (use its url as GITHUB_API_URL). It records every call
 * and answers the calls Recall makes; anything else gets a 404 like the real API.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  method: string;
  path: string;
  authorization: string | undefined;
  body: any;
}

export interface FakeGitHub {
  url: string;
  calls: RecordedCall[];
  /** The bodies of comments posted, in order. */
  comments(): Array<{ issue: number; body: string }>;
  stop(): Promise<void>;
}

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const calls: RecordedCall[] = [];
  let nextId = 1000;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const body = (raw ? safeJson(raw) : undefined) as any;
      calls.push({ method: req.method ?? '', path: url.pathname, authorization: req.headers.authorization, body });
      const send = (status: number, data: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(data));
      };
      const comment = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
      if (comment && req.method === 'POST') {
        const id = nextId++;
        return send(201, {
          id,
          body: body?.body,
          html_url: `https://github.com/${comment[1]}/${comment[2]}/issues/${comment[3]}#issuecomment-${id}`,
        });
      }
      send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    comments: () =>
      calls
        .filter((c) => c.method === 'POST' && /\/issues\/\d+\/comments$/.test(c.path))
        .map((c) => ({ issue: Number(/\/issues\/(\d+)\//.exec(c.path)![1]), body: String(c.body?.body ?? '') })),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
