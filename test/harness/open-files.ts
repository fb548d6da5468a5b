/** What this process holds open (Linux: /proc/self/fd), for tests that a file or store is closed. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The files under `d` this process holds open. */
export function heldOpen(d: string): string[] {
  return fs
    .readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return ''; // the fd of the listing itself, closed by now
      }
    })
    .filter((target) => target.startsWith(`${d}${path.sep}`));
}
