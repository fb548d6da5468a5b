import * as fs from 'node:fs';

/** The event as a runner describes it: GITHUB_EVENT_NAME and the payload at GITHUB_EVENT_PATH. */
export interface EventContext {
  eventName: string;
  payload: Record<string, any>;
  serverUrl: string;
  repository: string;
  runId: string;
}

export function readEventContext(env: NodeJS.ProcessEnv): EventContext {
  let payload: Record<string, any> = {};
  const eventPath = env.GITHUB_EVENT_PATH;
  if (eventPath && fs.existsSync(eventPath)) {
    payload = JSON.parse(fs.readFileSync(eventPath, 'utf8')) as Record<string, any>;
  }
  return {
    eventName: env.GITHUB_EVENT_NAME ?? '',
    payload,
    serverUrl: env.GITHUB_SERVER_URL || 'https://github.com',
    repository: env.GITHUB_REPOSITORY ?? '',
    runId: env.GITHUB_RUN_ID ?? '',
  };
}
