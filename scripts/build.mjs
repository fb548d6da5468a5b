// Bundles the action's entry points with ncc into dist/<entry>/index.js.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

for (const entry of ['main', 'post']) {
  rmSync(`dist/${entry}`, { recursive: true, force: true });
  execFileSync(
    'ncc',
    ['build', `src/${entry}.ts`, '--out', `dist/${entry}`, '--license', 'licenses.txt', '--quiet', '--target', 'es2022'],
    { stdio: 'inherit' },
  );
}
