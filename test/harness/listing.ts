import * as fs from 'node:fs';
import * as path from 'node:path';

/** Every file under `dir` with its size and modification time: what a test compares to see that nothing was written. */
export function listing(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => {
    const file = path.join(e.parentPath, e.name);
    const st = fs.statSync(file);
    return `${path.relative(dir, file)} ${st.size} ${st.mtimeMs}`;
  }).sort();
}
