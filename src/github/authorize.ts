/**
 * May this sender make the agent act, and with which rights (RFC-004)? Asked before anything runs:
 * write access acts fully; a bot only when in allowed-bots; a fork's pull request only when allowed;
 * allowed-users read-only; when the API cannot answer, no.
 */
import { describe } from '../errors.js';
import type { GitHubApi, Permission } from './api.js';

export interface AuthorizationSettings {
  allowedBots: string[];
  allowForks: boolean;
  /** Logins without write access that may trigger a read-only run; `everyone` lets anybody. */
  allowedUsers: string[] | 'everyone';
}

/**
 * `restricted`: the request comes from someone nobody with write access vouched for, so the run
 * gets a fork's read-only mode (no shell, no edits, no web, nothing pushed).
 */
export type Authorization =
  | { allowed: true; as: 'collaborator'; permission: Permission; restricted: false }
  | { allowed: true; as: 'bot'; restricted: false }
  | { allowed: true; as: 'outsider'; permission: Permission; restricted: true }
  | { allowed: false; reason: string };

const MAY_ACT: ReadonlySet<Permission> = new Set(['admin', 'maintain', 'write']);

const botName = (login: string) => login.toLowerCase().replace(/\[bot\]$/, '');
const sameLogin = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export async function authorize(
  api: GitHubApi,
  actor: { login: string; isBot: boolean; type?: string },
  pullRequest: { number?: number; isFork: boolean } | undefined,
  settings: AuthorizationSettings,
): Promise<Authorization> {
  if (!actor.login) return { allowed: false, reason: 'the event names no sender, so its permission cannot be checked.' };
  const listedBot = settings.allowedBots.some((b) => botName(b) === botName(actor.login));
  if (actor.isBot && !listedBot) {
    return { allowed: false, reason: `bot ${actor.login} is not in allowed-bots; add it there to let it trigger Recall.` };
  }
  if (pullRequest?.isFork && !settings.allowForks) {
    const which = pullRequest.number ? `pull request #${pullRequest.number}` : 'the pull request';
    return { allowed: false, reason: `${which} comes from a fork; set allow-forks: true to work on fork pull requests.` };
  }
  // An App bot is no collaborator: the permission endpoint answers 404 "is not a user" (or
  // `none`) for it. Listing it is the owner's grant; only GitHub can set a sender's type to Bot.
  if (listedBot && actor.type === 'Bot') return { allowed: true, as: 'bot', restricted: false };
  let permission: Permission;
  try {
    permission = await api.permissionOf(actor.login);
  } catch (error) {
    return {
      allowed: false,
      reason: `the permission of ${actor.login} could not be checked (${describe(error)}); Recall does not act without it. Check that github-token can read the repository's collaborators.`,
    };
  }
  if (MAY_ACT.has(permission)) return { allowed: true, as: 'collaborator', permission, restricted: false };
  const { allowedUsers } = settings;
  // A login that claims to be a bot but is not of type Bot gets no outsider pass either.
  if (!actor.isBot && (allowedUsers === 'everyone' || allowedUsers.some((u) => sameLogin(u, actor.login)))) {
    return { allowed: true, as: 'outsider', permission, restricted: true };
  }
  return {
    allowed: false,
    reason: `${actor.login} has ${permission} permission; Recall acts only for people with write, maintain or admin permission on the repository, or read-only for those listed in allowed-users.`,
  };
}
