/**
 * A local stand-in for the GitHub Actions artifact service (the results service's
 * `github.actions.results.api.v1.ArtifactService`, as @actions/artifact 2 and later speak it), good
 * enough for the real library's uploadArtifact to run against:
 *  - Twirp JSON CreateArtifact (answers a signed blob URL) and FinalizeArtifact (checks the size
 *    and the sha256 the client reports against the bytes that arrived);
 *  - the Azure Blob calls the library's uploadStream makes to that URL: Put Block and Put Block
 *    List (and a single Put Blob).
 * On GitHub the cache and the artifacts share one results host (ACTIONS_RESULTS_URL) and one
 * runtime token, so this serves its routes from the cache service's server (`routes`), and mints
 * the token: a JWT whose `scp` claim names the run and job, which the library reads its ids from.
 * An artifact name is unique per workflow run, as on GitHub: a second one is answered 409.
 */
import { createHash, createHmac } from 'node:crypto';
import type http from 'node:http';
import { readAll, sendBlobError, sendCreated, sendJson } from './cache-service.js';

const TWIRP_PREFIX = '/twirp/github.actions.results.api.v1.ArtifactService/';
const BLOB_PREFIX = '/artifact-blobs/';

export interface StoredArtifact {
  id: number;
  name: string;
  /** What the upload put in the blob (the file itself, for an unzipped upload). */
  content: Buffer;
  mimeType?: string;
  finalized: boolean;
}

export interface ArtifactService {
  /** ACTIONS_RUNTIME_TOKEN for the steps: a JWT naming this run and job. */
  readonly token: string;
  /** Serves a request of the artifact service; false when it is another service's (the cache's). */
  routes(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<boolean>;
  /** Every artifact created, finalized or not, in creation order. */
  artifacts(): StoredArtifact[];
  /** Every Twirp call, with its HTTP status. */
  calls: Array<{ method: string; status: number; body: unknown }>;
  /** Answer the next N Twirp calls with HTTP 400 (not retried): an upload that fails. */
  faults: { rejectCalls?: number };
}

/** An unsigned JWT (the library only decodes it) with the results scope for these backend ids. */
export function runtimeToken(runBackendId: string, jobBackendId: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ scp: `Actions.GenericRead:0 Actions.Results:${runBackendId}:${jobBackendId}` })}.signature`;
}

export function createArtifactService(o: { runBackendId?: string; jobBackendId?: string } = {}): ArtifactService {
  const runId = o.runBackendId ?? 'run-backend-0001';
  const jobId = o.jobBackendId ?? 'job-backend-0001';
  const token = runtimeToken(runId, jobId);
  const stored: StoredArtifact[] = [];
  const blocks = new Map<number, Map<string, Buffer>>();
  const calls: ArtifactService['calls'] = [];
  const faults: ArtifactService['faults'] = {};
  const sign = (id: number) => createHmac('sha256', token).update(`artifact:${id}`).digest('base64url');

  class Refused extends Error {
    constructor(readonly status: number, readonly code: string, message: string) {
      super(message);
    }
  }

  function twirp(method: string, body: Record<string, unknown>, host: string): unknown {
    if (body.workflow_run_backend_id !== runId || body.workflow_job_run_backend_id !== jobId) {
      throw new Refused(400, 'invalid_argument', 'workflow run or job backend id does not match the token');
    }
    const name = String(body.name ?? '');
    if (method === 'CreateArtifact') {
      if (stored.some((a) => a.name === name)) throw new Refused(409, 'already_exists', 'an artifact with this name already exists on the workflow run');
      const id = stored.length + 1;
      stored.push({ id, name, content: Buffer.alloc(0), finalized: false, ...(typeof body.mime_type === 'string' ? { mimeType: body.mime_type } : {}) });
      return { ok: true, signed_upload_url: `http://${host}${BLOB_PREFIX}${id}?sig=${sign(id)}` };
    }
    if (method === 'FinalizeArtifact') {
      const artifact = stored.find((a) => a.name === name && !a.finalized);
      if (!artifact) throw new Refused(404, 'not_found', 'no artifact of that name is being uploaded');
      const hash = `sha256:${createHash('sha256').update(artifact.content).digest('hex')}`;
      if (Number(body.size) !== artifact.content.length || (body.hash !== undefined && body.hash !== hash)) {
        return { ok: false, artifact_id: '0' };
      }
      artifact.finalized = true;
      return { ok: true, artifact_id: String(artifact.id) };
    }
    throw new Refused(404, 'bad_route', `no handler for ${method}`);
  }

  async function blob(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const id = Number(url.pathname.slice(BLOB_PREFIX.length));
    const artifact = stored.find((a) => a.id === id);
    if (!artifact || artifact.finalized || url.searchParams.get('sig') !== sign(id) || req.method !== 'PUT') {
      req.resume();
      sendBlobError(res, 403, 'AuthenticationFailed', 'Signature did not match, or the artifact is no longer open.');
      return;
    }
    const body = await readAll(req);
    const staged = blocks.get(id) ?? new Map<string, Buffer>();
    blocks.set(id, staged);
    const comp = url.searchParams.get('comp');
    if (comp === 'block') staged.set(url.searchParams.get('blockid') ?? '', body);
    else if (comp === 'blocklist') {
      const ids = [...body.toString('utf8').matchAll(/<(Latest|Uncommitted|Committed)>([^<]*)<\/\1>/g)].map((m) => m[2]!);
      if (ids.some((b) => !staged.has(b))) return sendBlobError(res, 400, 'InvalidBlockList', 'The specified block list is invalid.');
      artifact.content = Buffer.concat(ids.map((b) => staged.get(b)!));
    } else artifact.content = body;
    sendCreated(req, res, comp === 'blocklist' ? {} : { 'content-md5': createHash('md5').update(body).digest('base64') });
  }

  return {
    token,
    calls,
    faults,
    artifacts: () => stored.map((a) => ({ ...a })),
    async routes(req, res, url) {
      if (url.pathname.startsWith(BLOB_PREFIX)) {
        await blob(req, res, url);
        return true;
      }
      if (!url.pathname.startsWith(TWIRP_PREFIX)) return false;
      const method = url.pathname.slice(TWIRP_PREFIX.length);
      const raw = (await readAll(req)).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw || '{}');
        if ((faults.rejectCalls ?? 0) > 0) {
          faults.rejectCalls! -= 1;
          throw new Refused(400, 'failed_precondition', 'injected failure');
        }
        if (req.headers.authorization !== `Bearer ${token}`) throw new Refused(401, 'unauthenticated', 'missing or invalid runtime token');
        const answer = twirp(method, body as Record<string, unknown>, req.headers.host ?? '127.0.0.1');
        calls.push({ method, status: 200, body });
        sendJson(res, 200, answer);
      } catch (error) {
        const refused = error instanceof Refused ? error : new Refused(400, 'malformed', String(error));
        calls.push({ method, status: refused.status, body });
        sendJson(res, refused.status, { code: refused.code, msg: refused.message });
      }
      return true;
    },
  };
}
