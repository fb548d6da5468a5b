/**
 * Attaches a file to the workflow run as an artifact (RFC-003, the transcript), through the real
 * @actions/artifact: Twirp CreateArtifact and FinalizeArtifact on the Actions results service, the
 * bytes to the blob URL it signs. The file goes up as it is (not zipped), so the run's page offers
 * the Markdown itself. A failure only warns: the user's job never fails for its transcript.
 */
import * as core from '@actions/core';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe } from '../errors.js';

export interface AttachOptions {
  /** The workflow run's page: the artifact's link is under it. */
  runUrl?: string;
  info: (message: string) => void;
  warn: (message: string) => void;
}

/** What the results service answers when the run already has an artifact of that name. */
const NAME_TAKEN = /\(409\)|already exists/i;

export async function attachToRun(file: string, o: AttachOptions): Promise<void> {
  const started = Date.now();
  try {
    // Loaded only here: a run that attaches nothing does not parse the library (1.43 MB of dist/ with the Azure SDK, RFC-001).
    const { DefaultArtifactClient, GHESNotSupportedError } = await import('@actions/artifact');
    const client = new DefaultArtifactClient();
    // Unzipped, the artifact's name is the file's name (the library takes it from the path).
    const upload = (from: string) => client.uploadArtifact(path.basename(from), [from], path.dirname(from), { skipArchive: true });
    try {
      let sent = file;
      const uploaded = await core.group('Attaching the transcript to the run', async () => {
        try {
          return await upload(file);
        } catch (error) {
          // Two Recall steps in one job, or a matrix of them: the same name, told apart once more.
          if (!NAME_TAKEN.test(describe(error))) throw error;
          sent = file.replace(/(\.md)?$/, `-${randomBytes(3).toString('hex')}$1`);
          fs.copyFileSync(file, sent);
          return upload(sent);
        }
      });
      const link = o.runUrl && uploaded.id ? `: ${o.runUrl}/artifacts/${uploaded.id}` : '';
      o.info(`The transcript is attached to the run as ${path.basename(sent)} (${uploaded.size ?? 0} bytes, in ${((Date.now() - started) / 1000).toFixed(1)} s)${link}`);
    } catch (error) {
      if (error instanceof GHESNotSupportedError) {
        o.info(`The transcript is not attached to the run: this GitHub Enterprise Server does not take artifacts from @actions/artifact 2 and later. It is at ${file} (the transcript output).`);
        return;
      }
      throw error;
    }
  } catch (error) {
    o.warn(`Recall could not attach the transcript to the run (${describe(error)}); it is at ${file} (the transcript output) for a later step to keep. upload-transcript: false turns the upload off.`);
  }
}
