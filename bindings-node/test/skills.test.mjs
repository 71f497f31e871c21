// Skills (SEP-2640) published by a Node server: server.addSkills(dir) makes
// every skill under dir listed by skills/list and its files readable as
// resources; a malformed skill is refused with the reason.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Client, Server, McpError } from '../index.mjs';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

async function rpc(url, id, method, params = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(method === 'resources/read' ? { 'mcp-name': params.uri } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }),
  });
  return response.json();
}

test('addSkills publishes the skills of a directory', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferromcp-skills-'));
  try {
    mkdirSync(path.join(dir, 'git-workflow', 'references'), { recursive: true });
    writeFileSync(
      path.join(dir, 'git-workflow', 'SKILL.md'),
      '---\nname: git-workflow\ndescription: Our Git conventions\n---\n# Branches\n',
    );
    writeFileSync(path.join(dir, 'git-workflow', 'references', 'commits.md'), 'Say why.');
    const server = new Server({ name: 'skills', version: '1.0.0' });
    assert.deepEqual(server.addSkills(dir), ['skill://git-workflow/SKILL.md']);
    let url;
    const served = server.serveHttp({ port: 0, onListening: (address) => (url = address.url) });
    try {
      while (!url) await new Promise((resolve) => setTimeout(resolve, 10));
      const listed = await rpc(url, 1, 'skills/list');
      const [entry] = listed.result.skills;
      assert.equal(entry.uri, 'skill://git-workflow/SKILL.md');
      assert.equal(entry.frontmatter.description, 'Our Git conventions');
      assert.deepEqual(
        entry.resources.map((r) => r.uri),
        ['skill://git-workflow/SKILL.md', 'skill://git-workflow/references/commits.md'],
      );
      const read = await rpc(url, 2, 'resources/read', { uri: 'skill://git-workflow/references/commits.md' });
      assert.equal(read.result.contents[0].text, 'Say why.');
    } finally {
      server.close();
      await served;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a malformed skill is refused with the reason', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferromcp-skills-'));
  try {
    mkdirSync(path.join(dir, 'pdf'));
    writeFileSync(path.join(dir, 'pdf', 'SKILL.md'), '---\nname: other\ndescription: x\n---\n');
    const server = new Server({ name: 'skills', version: '1.0.0' });
    assert.throws(() => server.addSkills(dir), (error) => error instanceof McpError && /ends in "pdf"/.test(error.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the client lists, loads and reads skills, each file checked', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferromcp-skills-'));
  const skillMd = '---\nname: release\ndescription: How we release\n---\n# Steps\n';
  try {
    mkdirSync(path.join(dir, 'ops', 'release', 'scripts'), { recursive: true });
    writeFileSync(path.join(dir, 'ops', 'release', 'SKILL.md'), skillMd);
    writeFileSync(path.join(dir, 'ops', 'release', 'scripts', 'tag.sh'), '#!/bin/sh\ngit tag "$1"\n');
    const server = new Server({ name: 'skills', version: '1.0.0' });
    server.addSkills(dir);
    let url;
    const served = server.serveHttp({ port: 0, onListening: (address) => (url = address.url) });
    try {
      while (!url) await new Promise((resolve) => setTimeout(resolve, 10));
      const client = await Client.http(url);
      try {
        const skills = [];
        for await (const skill of client.skills()) skills.push(skill);
        assert.equal(skills.length, 1);
        const [skill] = skills;
        assert.equal(skill.frontmatter.description, 'How we release');
        assert.deepEqual(await client.getSkill(skill.uri), skill);
        const loaded = await client.loadSkill(skill);
        assert.equal(loaded.skillMd, skillMd);
        assert.equal((await loaded.read('scripts/tag.sh')).toString(), '#!/bin/sh\ngit tag "$1"\n');
        // Unlisted files are refused unread; an entry that does not match
        // SKILL.md is refused.
        await assert.rejects(loaded.read('scripts/other.sh'), /does not list it/);
        const wrong = { ...skill, frontmatter: { name: 'release', description: 'changed' } };
        await assert.rejects(client.loadSkill(wrong), /frontmatter differs/);
        assert.equal((await client.loadSkill(skill.uri)).skill.uri, skill.uri);
      } finally {
        await client.close();
      }
    } finally {
      server.close();
      await served;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
