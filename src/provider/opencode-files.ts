/**
 * Names of OpenCode's that several rooms know: its configuration files, the proxy variables its
 * runtime reads; and the one test of a JSON object they all read configuration with. Here, the
 * lowest room that reads OpenCode's configuration (provider/), so that agent/ shares them too.
 */

/** OpenCode's configuration files in a folder (the checkout, a config dir, the managed folder). */
export const CONFIG_FILES = ['opencode.json', 'opencode.jsonc'] as const;

/** Variables through which a runtime sends its requests via a proxy (NO_PROXY only narrows them). */
export const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'] as const;

export type Config = Record<string, unknown>;

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is Config {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
