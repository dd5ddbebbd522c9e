import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanKubeConnection } from './connection.js';
import { loadKubeConnection } from './load.js';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-kube-load-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, cluster: string, user: string): string {
  const path = join(dir, name);
  writeFileSync(path, ['apiVersion: v1', 'kind: Config', 'clusters:', '- name: c', `  cluster: ${cluster}`, 'users:', '- name: u', `  user: ${user}`, 'contexts:', '- name: x', '  context: {cluster: c, user: u}', 'current-context: x', ''].join('\n'));
  return path;
}

async function authorization(conn: { applyToFetchOptions(o: object): Promise<{ headers?: unknown }> }): Promise<string | undefined> {
  const { headers } = await conn.applyToFetchOptions({});
  return (headers as Record<string, string>).Authorization;
}

test('kubeconfig with a token, a token file (re-read when it changes), basic auth: the lean connection', async () => {
  const token = await loadKubeConnection({ kubeconfig: kubeconfig('token', '{server: "https://10.0.0.1:6443/", insecure-skip-tls-verify: true}', '{token: abc}') });
  assert.ok(token instanceof LeanKubeConnection);
  assert.equal(token.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
  assert.equal(await authorization(token), 'Bearer abc');

  writeFileSync(join(dir, 'tok'), 'first\n');
  const file = await loadKubeConnection({ kubeconfig: kubeconfig('tokfile', '{server: "http://127.0.0.1:1"}', '{tokenFile: tok}') });
  assert.equal(await authorization(file), 'Bearer first', 'a relative tokenFile is read beside the kubeconfig');

  const basic = await loadKubeConnection({ kubeconfig: kubeconfig('basic', '{server: "http://127.0.0.1:1"}', '{username: me, password: pw}') });
  assert.equal(await authorization(basic), `Basic ${Buffer.from('me:pw').toString('base64')}`);
});

test('in-cluster: server from the service host/port, token file and CA of the service account', async () => {
  const sa = join(dir, 'sa');
  rmSync(sa, { recursive: true, force: true });
  const { mkdirSync } = await import('node:fs');
  mkdirSync(sa);
  writeFileSync(join(sa, 'token'), 'sa-token');
  writeFileSync(join(sa, 'ca.crt'), 'not really a CA');
  const conn = await loadKubeConnection({ serviceHost: 'fd00::1', servicePort: '443', serviceAccountDir: sa });
  assert.equal(conn.getCurrentCluster()?.server, 'https://[fd00::1]:443');
  assert.equal(await authorization(conn), 'Bearer sa-token');
  await assert.rejects(loadKubeConnection({ serviceAccountDir: sa }), /KUBERNETES_SERVICE_HOST/);
});

test('a kubeconfig user with an exec plugin gets the library KubeConfig (the lean connection cannot run it)', async () => {
  const path = kubeconfig('exec', '{server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}', '{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true}}');
  const conn = await loadKubeConnection({ kubeconfig: path });
  assert.ok(!(conn instanceof LeanKubeConnection));
  assert.equal(conn.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
});

test('a rotated token file is picked up', async () => {
  writeFileSync(join(dir, 'rot'), 'one');
  const conn = new LeanKubeConnection('http://127.0.0.1:1', {}, { kind: 'tokenFile', path: join(dir, 'rot') });
  assert.equal(await authorization(conn), 'Bearer one');
  writeFileSync(join(dir, 'rot'), 'two');
  utimesSync(join(dir, 'rot'), new Date(), new Date(Date.now() + 5000));
  // Checked again after TOKEN_CHECK_MS: simulate by a fresh connection state.
  (conn as unknown as { token: { checkedAt: number } }).token.checkedAt = 0;
  assert.equal(await authorization(conn), 'Bearer two');
  conn.destroy();
});

test('--context picks another context of the kubeconfig than its current-context, in both connections', async () => {
  const path = join(dir, 'two-contexts');
  writeFileSync(path, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: a', '  cluster: {server: "https://10.0.0.1:6443"}', '- name: b', '  cluster: {server: "https://10.0.0.2:6443"}',
    'users:', '- name: u', '  user: {token: t}', '- name: e', '  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true}}',
    'contexts:', '- name: one', '  context: {cluster: a, user: u}', '- name: two', '  context: {cluster: b, user: u}', '- name: three', '  context: {cluster: b, user: e}',
    'current-context: one', '',
  ].join('\n'));
  assert.equal((await loadKubeConnection({ kubeconfig: path })).getCurrentCluster()?.server, 'https://10.0.0.1:6443');
  assert.equal((await loadKubeConnection({ kubeconfig: path, context: 'two' })).getCurrentCluster()?.server, 'https://10.0.0.2:6443');
  const library = await loadKubeConnection({ kubeconfig: path, context: 'three' });
  assert.ok(!(library instanceof LeanKubeConnection));
  assert.equal(library.getCurrentCluster()?.server, 'https://10.0.0.2:6443');
  await assert.rejects(loadKubeConnection({ kubeconfig: path, context: 'nope' }), /no context named nope/);
});
