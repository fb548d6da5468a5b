// Bundles the action's entry points and the CLI with ncc into dist/<entry>/index.js.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

const ENTRIES = { main: 'src/index.ts', post: 'src/index-post.ts', cli: 'src/cli/index.ts' };
for (const [entry, source] of Object.entries(ENTRIES)) {
  rmSync(`dist/${entry}`, { recursive: true, force: true });
  execFileSync(
    'ncc',
    ['build', source, '--out', `dist/${entry}`, '--license', 'licenses.txt', '--quiet', '--target', 'es2022'],
    { stdio: 'inherit' },
  );
}
