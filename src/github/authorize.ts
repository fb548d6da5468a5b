/**
 * May this sender make the agent act? Asked of the GitHub API before anything is restored or run.
 * Write, maintain or admin permission on the repository; bots only when listed, and then also
 * with write; a fork's pull request only when allowed. When the API cannot answer, the answer is no.
 */
import { describe } from '../errors.js';
import type { GitHubApi, Permission } from './api.js';

export interface AuthorizationSettings {
  allowedBots: string[];
  allowForks: boolean;
}

export type Authorization = { allowed: true; permission: Permission } | { allowed: false; reason: string };

const MAY_ACT: ReadonlySet<Permission> = new Set(['admin', 'maintain', 'write']);

const botName = (login: string) => login.toLowerCase().replace(/\[bot\]$/, '');

export async function authorize(
  api: GitHubApi,
  actor: { login: string; isBot: boolean },
  pullRequest: { number?: number; isFork: boolean } | undefined,
  settings: AuthorizationSettings,
): Promise<Authorization> {
  if (!actor.login) return { allowed: false, reason: 'the event names no sender, so its permission cannot be checked.' };
  if (actor.isBot && !settings.allowedBots.some((b) => botName(b) === botName(actor.login))) {
    return { allowed: false, reason: `bot ${actor.login} is not in allowed-bots; add it there to let it trigger Recall.` };
  }
  if (pullRequest?.isFork && !settings.allowForks) {
    const which = pullRequest.number ? `pull request #${pullRequest.number}` : 'the pull request';
    return { allowed: false, reason: `${which} comes from a fork; set allow-forks: true to work on fork pull requests.` };
  }
  let permission: Permission;
  try {
    permission = await api.permissionOf(actor.login);
  } catch (error) {
    return {
      allowed: false,
      reason: `the permission of ${actor.login} could not be checked (${describe(error)}); Recall does not act without it. Check that github-token can read the repository's collaborators.`,
    };
  }
  if (!MAY_ACT.has(permission)) {
    return {
      allowed: false,
      reason: `${actor.login} has ${permission} permission; Recall acts only for people with write, maintain or admin permission on the repository.`,
    };
  }
  return { allowed: true, permission };
}
