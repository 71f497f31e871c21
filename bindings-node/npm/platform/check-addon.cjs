'use strict';
// `npm pack`'s prepack hook for a platform package: refuses to pack without
// the addon, with an addon for another platform, or with a debug build (a
// debug addon is over 100 MB of DWARF and several times slower).
//
//   node check-addon.cjs ADDON PLATFORM      (PLATFORM: linux-arm64-gnu, darwin-x64, ...)
//
// Reads the file's header: ELF (Linux), Mach-O (macOS) or PE (Windows), for
// the platform's CPU; for ELF also that no .debug_* section is left. Not in
// the package's `files`: it only guards packing.
const fs = require('fs');

function fail(message) {
  console.error(`check-addon: ${message}`);
  process.exit(1);
}

const [file, platform] = process.argv.slice(2);
if (!file || !platform) fail('usage: node check-addon.cjs ADDON PLATFORM');
if (!fs.existsSync(file)) fail(`${file} is missing: build it first (make dist)`);
const bytes = fs.readFileSync(file);
const [os, cpu] = platform.split('-');

function checkElf() {
  if (bytes.readUInt32BE(0) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1) {
    fail(`${file} is not a 64-bit little-endian ELF file`);
  }
  const machine = { x64: 62, arm64: 183 }[cpu];
  if (bytes.readUInt16LE(16) !== 3 /* ET_DYN */ || bytes.readUInt16LE(18) !== machine) {
    fail(`${file} is not a shared object for ${cpu} (e_machine ${bytes.readUInt16LE(18)})`);
  }
  const shoff = Number(bytes.readBigUInt64LE(0x28));
  const shentsize = bytes.readUInt16LE(0x3a);
  const shnum = bytes.readUInt16LE(0x3c);
  const shstrndx = bytes.readUInt16LE(0x3e);
  const section = (i) => shoff + i * shentsize;
  const namesOffset = Number(bytes.readBigUInt64LE(section(shstrndx) + 0x18));
  const names = [];
  for (let i = 0; i < shnum; i++) {
    const start = namesOffset + bytes.readUInt32LE(section(i));
    names.push(bytes.toString('latin1', start, bytes.indexOf(0, start)));
  }
  const debug = names.filter((n) => n.startsWith('.debug_'));
  if (debug.length > 0) fail(`${file} is a debug build (it has ${debug.join(', ')}); pack the release build (make dist)`);
}

function checkMachO() {
  if (bytes.readUInt32LE(0) !== 0xfeedfacf) fail(`${file} is not a 64-bit Mach-O file`);
  const cputype = { x64: 0x01000007, arm64: 0x0100000c }[cpu];
  if (bytes.readUInt32LE(4) !== cputype) fail(`${file} is not built for ${cpu}`);
  if (bytes.readUInt32LE(12) !== 6 /* MH_DYLIB */) fail(`${file} is not a dynamic library`);
}

function checkPe() {
  if (bytes.toString('latin1', 0, 2) !== 'MZ') fail(`${file} is not a PE file`);
  const pe = bytes.readUInt32LE(0x3c);
  if (bytes.toString('latin1', pe, pe + 4) !== 'PE\0\0') fail(`${file} has no PE header`);
  if (bytes.readUInt16LE(pe + 4) !== 0x8664) fail(`${file} is not built for x64`);
  if ((bytes.readUInt16LE(pe + 22) & 0x2000) === 0) fail(`${file} is not a DLL`);
}

if (os === 'linux') checkElf();
else if (os === 'darwin') checkMachO();
else if (os === 'win32') checkPe();
else fail(`unknown platform ${platform}`);
console.error(`check-addon: ${file}: ${platform} addon, ${(bytes.length / 1e6).toFixed(1)} MB`);
