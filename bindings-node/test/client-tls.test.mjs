// The Node client over https://: a ferromcp server behind a TLS terminator
// (node:tls) with a CA and server certificate made at test time by the
// `openssl` command; trusted through `caCerts` (a path or PEM text), refused
// with kind "http" and a message naming the host without it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

import { Client, Server } from '../index.mjs';

function hasOpenssl() {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** ca.pem, server.pem and server.key (localhost, 127.0.0.1) in `dir`. */
function makePki(dir) {
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
    '-subj', '/CN=ferromcp node test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'ext.cnf'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
}

/** Accepts TLS on a free loopback port and pipes the plaintext to `backendPort`. */
function terminator(dir, backendPort) {
  const server = tls.createServer(
    { cert: readFileSync(join(dir, 'server.pem')), key: readFileSync(join(dir, 'server.key')) },
    (socket) => {
      const upstream = net.connect(backendPort, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    },
  );
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('https with a private CA; refused without it', { skip: !hasOpenssl() && 'needs openssl' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferromcp-node-tls-'));
  const server = new Server({ name: 'tls-demo', version: '1.0.0' }).tool(
    'hello',
    { inputSchema: { type: 'object' } },
    () => 'hi over tls',
  );
  let served;
  const address = await new Promise((resolve, reject) => {
    served = server.serveHttp({ port: 0, onListening: resolve });
    served.catch(reject);
  });
  let front;
  try {
    makePki(dir);
    front = await terminator(dir, address.port);
    const port = front.address().port;
    const url = `https://localhost:${port}/mcp`;
    const ca = join(dir, 'ca.pem');
    for (const source of [ca, readFileSync(ca, 'ascii')]) {
      const client = await Client.http(url, { caCerts: [source], timeout: 10_000 });
      try {
        const result = await client.callTool('hello', {});
        assert.equal(result.content[0].text, 'hi over tls');
      } finally {
        await client.close();
      }
    }
    const client = await Client.http(url, { tlsRoots: 'webpki', timeout: 10_000 }).catch((e) => e);
    const refused = client instanceof Error ? client : await client.callTool('hello', {}).catch((e) => e);
    if (!(client instanceof Error)) await client.close();
    assert.ok(refused instanceof Error, String(refused));
    assert.equal(refused.kind, 'http');
    assert.match(refused.message, new RegExp(`localhost:${port}`));
    assert.match(refused.message, /unknown certificate authority/);
  } finally {
    front?.close();
    server.close();
    await served;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the server serves https itself with its own certificate', { skip: !hasOpenssl() && 'needs openssl' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferromcp-node-server-tls-'));
  try {
    makePki(dir);
    const server = new Server({ name: 'tls-server', version: '1.0.0' }).tool(
      'hello',
      { inputSchema: { type: 'object' } },
      () => 'hi from a tls server',
    );
    const tlsFiles = { certFile: join(dir, 'server.pem'), keyFile: join(dir, 'server.key') };
    let url;
    const served = new Promise((resolve, reject) => {
      server
        .serveHttp({ port: 0, tls: tlsFiles, handleSignals: false, onListening: (address) => resolve((url = address.url)) })
        .catch(reject);
    });
    await served;
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await Client.http(url.replace('127.0.0.1', 'localhost'), { caCerts: [join(dir, 'ca.pem')] });
    try {
      assert.equal((await client.callTool('hello')).content[0].text, 'hi from a tls server');
    } finally {
      await client.close();
    }
    server.close();
    // A settings mistake throws at the call, naming the member.
    assert.throws(() => server.serveHttp({ port: 0, tls: { certFile: 'x.pem' }, handleSignals: false }), /keyFile/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
