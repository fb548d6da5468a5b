/** The message of anything thrown, for logs and warnings. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
