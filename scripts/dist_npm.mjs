// Writes the npm tarballs of `make dist`, in the layout napi-rs uses for
// prebuilt addons: the main package `ferromcp` (JavaScript, typings, the
// napi-rs loader; no addon) with one optionalDependency per platform package
// (`ferromcp-linux-arm64-gnu`, `ferromcp-darwin-arm64`, ...: the addon alone,
// with `os`/`cpu`/`libc` so npm installs it only where it loads).
//
//   node scripts/dist_npm.mjs DIR
//
// DIR is scripts/dist.py's output: DIR/addons/ferromcp.<platform>.node for
// each platform built; the tarballs are written to DIR. Each platform
// package's manifest comes from scripts/platforms.json, its README from
// bindings-node/npm/platform/; each is staged under target/dist/npm/ and
// packed with `npm pack`, whose prepack hook (check-addon.cjs) refuses an
// addon for another platform or a debug build. Prints the tarballs' paths.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const nodeDir = path.join(root, 'bindings-node');
const stageRoot = path.join(root, 'target', 'dist', 'npm');
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const { '//': _about, ...PLATFORMS } = readJson(path.join(root, 'scripts', 'platforms.json'));

const [outDirArg] = process.argv.slice(2);
if (!outDirArg) {
  console.error('usage: node scripts/dist_npm.mjs DIR');
  process.exit(2);
}
const outDir = path.resolve(outDirArg);
const addon = (platform) => path.join(outDir, 'addons', `ferromcp.${platform}.node`);
const built = Object.keys(PLATFORMS).filter((p) => fs.existsSync(addon(p)));
if (built.length === 0) {
  console.error(`dist_npm: no addon in ${path.join(outDir, 'addons')} (run scripts/dist.py first)`);
  process.exit(1);
}
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

// The platform packages first: the main package names them.
const optionalDependencies = {};
const template = path.join(nodeDir, 'npm', 'platform');
for (const platform of built) {
  const spec = PLATFORMS[platform];
  const name = `${main.name}-${platform}`;
  const binary = `ferromcp.${platform}.node`;
  const dir = stage(name);
  const manifest = {
    name,
    version: main.version, // one version for the main and platform packages
    description: `The ferromcp native addon for ${spec.description}; installed by the \`ferromcp\` package as an optional dependency`,
    license: main.license,
    repository: { ...main.repository, directory: 'bindings-node/npm/platform' },
    main: binary,
    files: [binary, ...licenses], // npm adds LICENSE*, not LICENSE-MIT
    os: [spec.os],
    cpu: [spec.cpu],
    ...(spec.libc ? { libc: [spec.libc] } : {}),
    engines: main.engines,
    scripts: { prepack: `node check-addon.cjs ${binary} ${platform}` },
  };
  writeJson(path.join(dir, 'package.json'), manifest);
  const readme = fs.readFileSync(path.join(template, 'README.md'), 'utf8')
    .replaceAll('@PLATFORM@', platform)
    .replaceAll('@DESCRIPTION@', spec.description);
  fs.writeFileSync(path.join(dir, 'README.md'), readme);
  copy(path.join(template, 'check-addon.cjs'), path.join(dir, 'check-addon.cjs'));
  for (const f of licenses) copy(path.join(root, f), path.join(dir, f));
  copy(addon(platform), path.join(dir, binary));
  tarballs.push(pack(dir));
  optionalDependencies[name] = main.version;
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
