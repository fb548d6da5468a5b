// Writes src/agent/provider-env.json: the environment variables each OpenCode model provider
// reads its key from, as the pinned OpenCode binary's built-in models.dev catalogue lists them.
// Recall passes the agent only the variables of the providers a run uses (RFC-005), and its
// preflight fails a run whose provider OpenCode does not know or has none of (RFC-003). Run after
// changing the OpenCode version; a test checks the file against the binary.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const OUT = 'src/agent/provider-env.json';

export function providerEnvFrom(binaryPath) {
  const text = readFileSync(binaryPath).toString('latin1');
  const table = {};
  for (const m of text.matchAll(/\{id:"([a-z0-9.-]+)",env:\[((?:"[A-Za-z0-9_]+",?)*)\]/g)) {
    const names = [...m[2].matchAll(/"([A-Za-z0-9_]+)"/g)].map((n) => n[1]);
    if (names.length > 0) table[m[1]] = [...new Set([...(table[m[1]] ?? []), ...names])];
  }
  return Object.fromEntries(Object.entries(table).sort(([a], [b]) => a.localeCompare(b)));
}

/** One provider a line, so a version bump reads as a diff of providers. */
export function formatTable(table) {
  const lines = Object.entries(table).map(([id, names]) => `  ${JSON.stringify(id)}: ${JSON.stringify(names)}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}

// node scripts/provider-env.mjs [--check] [binary]: write the table, or exit 1 when it is stale.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const binary = process.argv.slice(2).find((a) => a !== '--check') ?? 'node_modules/opencode-linux-x64/bin/opencode';
  const table = providerEnvFrom(binary);
  const text = formatTable(table);
  if (check) {
    if (readFileSync(OUT, 'utf8') !== text) {
      console.error(`${OUT} does not match ${binary}: run node scripts/provider-env.mjs`);
      process.exit(1);
    }
  } else writeFileSync(OUT, text);
  console.log(`provider-env: ${Object.keys(table).length} providers`);
}
