'use strict';
// `npm pack`'s prepack hook for a platform package: refuses to pack without
// the addon, or with a debug build (a debug addon is over 100 MB of DWARF and
// several times slower). The addon must be an ELF shared object for x86_64
// without .debug_* sections. Not in the package's `files`: it only guards packing.
const fs = require('fs');

function fail(message) {
  console.error(`check-addon: ${message}`);
  process.exit(1);
}

const file = process.argv[2];
if (!file || !fs.existsSync(file)) {
  fail(`${file} is missing: build it optimised first (make dist copies target/x86_64-unknown-linux-gnu/release/libferromcp_node.so here)`);
}
const elf = fs.readFileSync(file);
if (elf.length < 64 || elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) {
  fail(`${file} is not a 64-bit little-endian ELF file`);
}
if (elf.readUInt16LE(16) !== 3 /* ET_DYN */ || elf.readUInt16LE(18) !== 62 /* EM_X86_64 */) {
  fail(`${file} is not an x86_64 shared object`);
}
const shoff = Number(elf.readBigUInt64LE(0x28));
const shentsize = elf.readUInt16LE(0x3a);
const shnum = elf.readUInt16LE(0x3c);
const shstrndx = elf.readUInt16LE(0x3e);
const section = (i) => shoff + i * shentsize;
const namesOffset = Number(elf.readBigUInt64LE(section(shstrndx) + 0x18));
const names = [];
for (let i = 0; i < shnum; i++) {
  const start = namesOffset + elf.readUInt32LE(section(i));
  names.push(elf.toString('latin1', start, elf.indexOf(0, start)));
}
const debug = names.filter((n) => n.startsWith('.debug_'));
if (debug.length > 0) {
  fail(`${file} is a debug build (it has ${debug.join(', ')}); pack the release build (make dist)`);
}
console.error(`check-addon: ${file}: optimised x86_64 addon, ${(elf.length / 1e6).toFixed(1)} MB`);
