/**
 * A model provider's API for the direct call's tests (src/provider/): a server on 127.0.0.1 at a
 * port chosen at run time that records every request as it came (method, the raw path with its
 * query, headers, body text) and answers as the test says. `stop()` closes it and every connection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderRequest {
  method: string;
  /** The request target as sent: path and query. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The body as JSON, or undefined. */
  json: any;
}

export type Answer = (request: ProviderRequest, res: ServerResponse) => void | Promise<void>;

export interface FakeProvider {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: ProviderRequest[];
  /** How the next requests are answered (default: 404). */
  answer(with_: Answer): void;
  /** Resolves once a connection's request was aborted by the client (its socket closed before the reply ended). */
  aborted(): Promise<void>;
  stop(): Promise<void>;
}

/** A JSON reply. */
export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Answer => (_r, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
};

export async function startFakeProvider(): Promise<FakeProvider> {
  const requests: ProviderRequest[] = [];
  let answer: Answer = json(404, { error: { message: 'no answer scripted' } });
  let onAbort: Array<() => void> = [];
  let abortedOnce = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json: parsed };
      requests.push(request);
      res.on('close', () => {
        if (res.writableFinished) return;
        abortedOnce = true;
        for (const f of onAbort) f();
        onAbort = [];
      });
      void Promise.resolve(answer(request, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer: (a) => void (answer = a),
    aborted: () => (abortedOnce ? Promise.resolve() : new Promise((resolve) => onAbort.push(resolve))),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
