/**
 * The names of the tools Recall gives the agent (agent/tools/): the tool host serves them, and the
 * policy (policy.ts) lets a read-only run keep the ones that only read.
 */
export const MEMORY_TOOL_NAMES = ['memory_search', 'memory_list', 'memory_read', 'memory_info', 'memory_save_finding'] as const;
/** Tools only a job (schedule, dispatch) gets: nobody waits in a thread, so the agent reports itself. */
export const JOB_TOOL_NAMES = ['post_message'] as const;
/** Read this repository's issues and pull requests through Recall's token (github/reading-tools.ts). */
export const GITHUB_TOOL_NAMES = ['github_list_issues', 'github_read_issue'] as const;
/** Ask another model of the run (dispatch-models), in a run that may change things. */
export const DISPATCH_TOOL = 'dispatch';
export type MemoryToolName = (typeof MEMORY_TOOL_NAMES)[number];
export type GitHubToolName = (typeof GITHUB_TOOL_NAMES)[number];
export type ToolName = MemoryToolName | GitHubToolName | (typeof JOB_TOOL_NAMES)[number] | typeof DISPATCH_TOOL;
/** The tools that only read memory: what a fork's read-only run gets. */
export const READING_TOOLS: readonly MemoryToolName[] = ['memory_search', 'memory_list', 'memory_read', 'memory_info'];
