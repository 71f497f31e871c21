// Writes the npm tarballs of `make dist`, in the layout napi-rs uses for
// prebuilt addons: the main package `ferromcp` (JavaScript, typings, the
// napi-rs loader; no addon) with one optionalDependency per platform package
// (`ferromcp-linux-x64-gnu`: the addon alone, with `os`/`cpu`/`libc` so npm
// installs it only where it loads).
//
//   node scripts/dist_npm.mjs ADDON OUT_DIR
//
// ADDON is the optimised libferromcp_node.so of `make dist`'s one
// cargo-zigbuild invocation (linked against glibc 2.17). Each package is
// staged under target/dist/npm/ from the files the committed package.json
// lists, then packed with `npm pack`; the platform package's prepack hook
// (bindings-node/npm/linux-x64-gnu/check-addon.cjs) refuses to pack without
// the addon or with a debug build. Prints the tarballs' paths.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const nodeDir = path.join(root, 'bindings-node');
const stageRoot = path.join(root, 'target', 'dist', 'npm');
// The platform packages built here: napi-rs's platform name -> Rust target.
const PLATFORMS = ['linux-x64-gnu'];

const [addon, outDirArg] = process.argv.slice(2);
if (!addon || !outDirArg) {
  console.error('usage: node scripts/dist_npm.mjs ADDON OUT_DIR');
  process.exit(2);
}
const outDir = path.resolve(outDirArg);
fs.mkdirSync(outDir, { recursive: true });

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const writeJson = (file, value) => fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** A fresh staging directory for one package. */
function stage(name) {
  const dir = path.join(stageRoot, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Files of `dir` matching a package.json `files` entry (a name, or `sub/*.ext`). */
function matching(dir, pattern) {
  if (!pattern.includes('*')) return fs.existsSync(path.join(dir, pattern)) ? [pattern] : [];
  const sub = path.dirname(pattern);
  const [prefix, suffix] = path.basename(pattern).split('*');
  const base = path.join(dir, sub);
  if (!fs.existsSync(base)) return [];
  return fs.readdirSync(base)
    .filter((f) => f.startsWith(prefix) && f.endsWith(suffix) && fs.statSync(path.join(base, f)).isFile())
    .map((f) => (sub === '.' ? f : path.join(sub, f)));
}

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
}

/** `npm pack` in dir, into outDir; returns the tarball's path. */
function pack(dir) {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', outDir], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // prepack hooks may print before the JSON document.
  const [result] = JSON.parse(out.slice(out.indexOf('[')));
  return path.join(outDir, result.filename);
}

const main = readJson(path.join(nodeDir, 'package.json'));
const licenses = ['LICENSE-APACHE', 'LICENSE-MIT'];
const tarballs = [];

// The platform package first: the main package names it.
const optionalDependencies = {};
for (const platform of PLATFORMS) {
  const template = path.join(nodeDir, 'npm', platform);
  const dir = stage(`${main.name}-${platform}`);
  const manifest = readJson(path.join(template, 'package.json'));
  manifest.version = main.version; // one version for the main and platform packages
  manifest.files = [...manifest.files, ...licenses]; // npm adds LICENSE*, not LICENSE-MIT
  writeJson(path.join(dir, 'package.json'), manifest);
  for (const f of ['README.md', 'check-addon.cjs']) copy(path.join(template, f), path.join(dir, f));
  for (const f of licenses) copy(path.join(root, f), path.join(dir, f));
  copy(addon, path.join(dir, manifest.main));
  tarballs.push(pack(dir));
  optionalDependencies[manifest.name] = main.version;
}

// The main package: what `files` lists, never an addon (a debug build may be
// lying in bindings-node/ for development), and no dev-only fields.
const dir = stage(main.name);
const files = [...main.files.filter((f) => !f.endsWith('.node')), ...licenses];
for (const pattern of files) {
  for (const f of matching(nodeDir, pattern)) copy(path.join(nodeDir, f), path.join(dir, f));
}
copy(path.join(nodeDir, 'README.md'), path.join(dir, 'README.md'));
for (const f of licenses) copy(path.join(root, f), path.join(dir, f));
const manifest = { ...main, files, optionalDependencies };
delete manifest.devDependencies;
delete manifest.scripts; // build scripts that need the repository
writeJson(path.join(dir, 'package.json'), manifest);
tarballs.push(pack(dir));

for (const t of tarballs) console.log(path.relative(root, t));
