/**
 * A restored snapshot whose index of past work is damaged (issue 24): the run salvages what reads
 * and rebuilds a record per session, but sessionless records are gone. They are taken back from the
 * newest usable earlier snapshot, checked, without what a forget removed
 * (RecallFiles.recoverRecords); the warning says what was read, taken back and lost.
 */
import { describe } from '../errors.js';
import { fetchBeside, MAX_FALLBACKS, withWarning, type FallbackContext, type Restored } from './fallback.js';
import * as fs from 'node:fs';

export async function recoverDamagedIndex(ctx: FallbackContext, restored: Restored): Promise<Restored> {
  const damage = ctx.recallFiles?.indexDamage(ctx.memoryDir);
  if (!damage || !restored.restoredKey || !ctx.recallFiles) return restored;
  const lost = damage.held - damage.read;
  const intro = `Recall's index of past work in ${restored.restoredKey} is damaged: ${damage.read} of its ${damage.held} records could be read`;
  let listed: string[] = [];
  try {
    listed = (await ctx.backend.olderKeys?.()) ?? [];
  } catch {
    // the keys the manifest names, then
  }
  const candidates = [...new Set([...(restored.earlier ?? []), ...listed])].filter((k) => k !== restored.restoredKey && !(restored.setAside ?? []).includes(k)).slice(0, MAX_FALLBACKS);
  if (candidates.length === 0) return withWarning(restored, `${intro}; no earlier snapshot to take the other ${lost} from, so they are lost (sessions without a record are rebuilt).`);
  const { found, theirs, passed } = await fetchBeside(ctx, candidates);
  try {
    if (!found) return withWarning(restored, `${intro}; no earlier snapshot could be used to take the other ${lost} from (${passed.join('; ')}), so they are lost.`);
    const taken = ctx.recallFiles.recoverRecords(ctx.memoryDir, theirs);
    const still = ctx.recallFiles.indexDamage(ctx.memoryDir);
    return withWarning(restored, `${intro}; ${taken} taken back from the earlier snapshot ${found}${still || taken < lost ? `, ${Math.max(0, lost - taken)} not there either and lost` : ''}.`);
  } catch (error) {
    return withWarning(restored, `${intro}; taking the rest from ${found} failed (${describe(error)}), so they are lost.`);
  } finally {
    fs.rmSync(theirs, { recursive: true, force: true });
  }
}
