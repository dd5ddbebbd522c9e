/**
 * Both images, built by a real builder (buildah, from images/*.Dockerfile and this checkout)
 * and run for real:
 *   - the agent image in a network namespace with NET_ADMIN as its only capability, watching
 *     the API stand-in (test/apiserver, relayed into the namespace), answering /readyz and
 *     deleting a deleted pod's conntrack entry in that namespace;
 *   - the webhook image as its non-root user, serving HTTPS with a certificate generated here
 *     and answering an AdmissionReview; and in --tls-mode=self-signed, creating its Secret
 *     and caBundle on the API stand-in.
 * The base is built offline (offline-base.sh) because no registry is reachable: Debian 12 with
 * this machine's Node, not the node:24/distroless images the Dockerfiles default to.
 * Then `npm run images` (scripts/images) builds both for every platform it can (amd64 from the
 * layer cache of the builds above; arm64 through qemu-user-static), pushes the manifest lists
 * to a real registry on loopback (Debian's docker-registry), pulls them back with skopeo, runs
 * `conndrain --version` in every image of every list, and `npm run release -- --images` pins
 * the install files to the pushed digests.
 * Slow (a first build takes minutes, docs/install.md says how long): suite `image`.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openNetlink } from 'netlink-native';
import { insertConntrackForTest } from 'netlink-native/testing';
import { FakeApiServer } from '../apiserver/server.js';
import { managedPod } from '../apiserver/pods.js';
import { addNetns, API_PORT_IN_NODE, deleteNetns, getUnix, startRelay, until } from '../agent/node-netns.js';
import { createTestCa, issueServingPair } from '../webhook/certs.js';
import { buildImage, Container, imageToolsProblem, inspectImage, offlineBase, REPO, RunningImage } from './builder.js';
import { LoopbackRegistry, registryToolsProblem } from './registry.js';
import { hostArch } from '../../scripts/images/binfmt.js';
import type { ImagesFile } from '../../scripts/images/images.js';

const skip = imageToolsProblem() ?? false;
const NS = `cdimg-${process.pid}`;
const METRICS_PORT = 19902;
const PROBES_PORT = 19903;
const DRAIN_PORT = 19901;
/**
 * What `npm run images` is asked for here: this machine's platform (its build is the one the
 * tests above made, from the layer cache), so the push, pull-back and release path costs CI
 * a few minutes (5.4 min on a loaded 2-core machine, mostly buildah re-checking its cache). CONNDRAIN_IMAGE_PLATFORMS=linux/amd64,linux/arm64 adds the emulated arm64
 * build (its offline base, build-essential, npm ci, node-gyp and tsc under qemu-user: tens of
 * minutes on a 2-core machine, docs/install.md), too long for CI's budget.
 */
const PLATFORMS = process.env.CONNDRAIN_IMAGE_PLATFORMS ?? `linux/${hostArch()}`;

describe('the Dockerfiles', () => {
  it('default to the real upstream bases (Node 24); the tests override BASE/RUNTIME', () => {
    const agent = readFileSync(join(REPO, 'images/agent.Dockerfile'), 'utf8');
    const webhook = readFileSync(join(REPO, 'images/webhook.Dockerfile'), 'utf8');
    assert.match(agent, /^ARG BASE=node:24-bookworm-slim$/m);
    assert.match(webhook, /^ARG BASE=node:24-bookworm-slim$/m);
    assert.match(webhook, /^ARG RUNTIME=gcr\.io\/distroless\/nodejs24-debian12:nonroot$/m);
  });
});

describe('images built with buildah', { skip, timeout: 60 * 60_000 }, () => {
  const dir = skip === false ? mkdtempSync(join(tmpdir(), 'cdimg-')) : '';
  const api = new FakeApiServer();
  const relays: ChildProcess[] = [];
  const containers: Container[] = [];
  const running: RunningImage[] = [];
  let agentTag = '';
  let webhookTag = '';

  before(async () => {
    const base = offlineBase();
    agentTag = buildImage('agent', base);
    webhookTag = buildImage('webhook', base);
    await api.start();
  }, { timeout: 60 * 60_000 });

  after(async () => {
    await Promise.all(running.map((r) => r.stop('SIGKILL')));
    for (const c of containers) c.remove();
    for (const r of relays) r.kill('SIGTERM');
    await api.close();
    deleteNetns(NS);
    rmSync(dir, { recursive: true, force: true });
  });

  const container = (tag: string): Container => {
    const c = new Container(tag);
    containers.push(c);
    return c;
  };

  describe('agent image', () => {
    it('holds the addon and the CLI, runs as root with the DaemonSet\'s ports, no npm', () => {
      const config = inspectImage(agentTag);
      assert.deepEqual(config.entrypoint, ['node', '/app/bin/conndrain.mjs']);
      assert.deepEqual(config.cmd, ['agent']);
      assert.equal(config.user, '0:0');
      assert.deepEqual(config.exposedPorts.sort(), ['9901/tcp', '9902/tcp']);
      const c = container(agentTag);
      assert.ok(existsSync(join(c.root, 'app/native/build/Release/netlink_native.node')));
      assert.ok(!existsSync(join(c.root, 'app/native/src')), 'no C sources at run time');
      assert.ok(!existsSync(join(c.root, 'usr/local/lib/node_modules/npm')), 'npm removed');
      assert.ok(!existsSync(join(c.root, 'app/node_modules/typescript')), 'dev dependencies pruned');
      assert.ok(existsSync(join(c.root, 'usr/sbin/nft')), 'nftables for flow pinning');
    });

    it('in a network namespace with only NET_ADMIN: /readyz, then a deleted pod\'s conntrack entry goes', { timeout: 300_000 }, async (t) => {
      addNetns(NS);
      await api.listenUnix(join(dir, 'api.sock'));
      api.writeKubeconfig(join(dir, 'kubeconfig'), `http://127.0.0.1:${API_PORT_IN_NODE}`);
      relays.push(await startRelay(NS, `tcp:127.0.0.1:${API_PORT_IN_NODE}`, `unix:${join(dir, 'api.sock')}`));
      relays.push(await startRelay(NS, `unix:${join(dir, 'metrics.sock')}`, `tcp:127.0.0.1:${METRICS_PORT}`));
      relays.push(await startRelay(NS, `unix:${join(dir, 'probes.sock')}`, `tcp:127.0.0.1:${PROBES_PORT}`));
      const netlink = openNetlink({ netns: NS });
      try {
        const inserted = await insertConntrackForTest(netlink, [
          { protocol: 'udp', origSrc: '192.0.2.7', origDst: '10.96.0.10', replySrc: '10.30.0.1', dstPort: 53, replySrcPort: 5353, timeout: 120 },
          { protocol: 'udp', origSrc: '192.0.2.7', origDst: '10.96.0.10', replySrc: '10.30.0.2', dstPort: 53, replySrcPort: 5353, srcPort: 40000, timeout: 120 },
        ]);
        assert.equal(inserted.failed, 0);
        api.putPod(managedPod({ name: 'gone', nodeName: 'node-img', ips: ['10.30.0.1'] }));
        api.putPod(managedPod({ name: 'alive', nodeName: 'node-img', ips: ['10.30.0.2'] }));
        const agent = new RunningImage(container(agentTag), ['node', '/app/bin/conndrain.mjs', 'agent'], {
          netns: NS,
          caps: ['NET_ADMIN'],
          volumes: [dir],
          args: ['--node-name', 'node-img', '--kubeconfig', join(dir, 'kubeconfig'), '--state-file', join(dir, 'state', 'state.json'),
            '--drain-port', String(DRAIN_PORT), '--metrics-port', String(METRICS_PORT), '--metrics-address', '127.0.0.1', '--metrics-secure=false', '--probes-port', String(PROBES_PORT), '--flush-window', '50ms', '--gone-slack', '0s'],
        });
        running.push(agent);
        await until('agent /readyz 200', async () => {
          try {
            return (await getUnix(join(dir, 'probes.sock'), '/readyz')).status === 200;
          } catch {
            return false;
          }
        }, 120_000).catch((error: Error) => {
          throw new Error(`${error.message}\n${agent.tail()}`);
        });
        t.diagnostic(`agent image: /readyz 200 ${Date.now() - agent.startedAt} ms after \`buildah run\``);
        api.deletePod('shop', 'gone');
        const count = async (ip: string): Promise<number> => (await netlink.listConntrack({ addresses: [ip], match: ['replySrc', 'origDst'] })).length;
        await until('the deleted pod\'s entry is flushed', async () => (await count('10.30.0.1')) === 0, 60_000).catch((error: Error) => {
          throw new Error(`${error.message}\n${agent.tail()}`);
        });
        assert.equal(await count('10.30.0.2'), 1, 'the live pod\'s entry stays');
        const status = readFileSync(`/proc/${String(findPid((cmdline) => cmdline.includes('/app/bin/conndrain.mjs\0agent'), NS))}/status`, 'utf8');
        assert.match(status, /^CapEff:\s+0000000000001000$/m, 'NET_ADMIN (bit 12) and nothing else');
        assert.match(status, /^CapBnd:\s+0000000000001000$/m);
      } finally {
        netlink.close();
      }
    });
  });

  describe('webhook image', () => {
    it('runs as 65532 (non-root) with no native addon and no compiler', () => {
      const config = inspectImage(webhookTag);
      assert.deepEqual(config.entrypoint, ['/nodejs/bin/node', '/app/bin/conndrain.mjs']);
      assert.deepEqual(config.cmd, ['webhook']);
      assert.equal(config.user, '65532:65532');
      assert.deepEqual(config.exposedPorts, ['9443/tcp']);
      const c = container(webhookTag);
      // netlink-native's JavaScript ships (the CLI imports the package); its compiled addon does not.
      assert.ok(!existsSync(join(c.root, 'app/native/build')), 'no addon');
      assert.ok(existsSync(join(c.root, 'app/native/dist/index.js')), 'the package\'s JavaScript');
      assert.ok(existsSync(join(c.root, 'app/dist/cli/main.js')), 'the compiled CLI (bundle)');
      assert.ok(existsSync(join(c.root, 'app/node_modules/@peculiar/x509')), 'self-signed mode\'s library is a production dependency');
    });

    it('serves HTTPS with a generated certificate and answers an AdmissionReview', { timeout: 180_000 }, async (t) => {
      const ca = createTestCa();
      const certDir = join(dir, 'tls');
      mkdirSync(certDir);
      const pair = issueServingPair(ca);
      writeFileSync(join(certDir, 'tls.crt'), pair.cert);
      writeFileSync(join(certDir, 'tls.key'), pair.key);
      // The Secret volume's 0440 with fsGroup 65532; a plain file here.
      for (const f of readdirSync(certDir)) chmodSync(join(certDir, f), 0o644);
      chmodSync(dir, 0o755);
      try {
        const webhook = new RunningImage(container(webhookTag), ['/nodejs/bin/node', '/app/bin/conndrain.mjs', 'webhook'], {
          caps: [],
          volumes: [certDir],
          args: ['--address=127.0.0.1', `--port=${await freePort()}`, `--cert-dir=${certDir}`, '--metrics-secure=false'],
        });
        running.push(webhook);
        const port = await listeningPort(webhook, (m) => t.diagnostic(m));
        const ready = await call(port, 'GET', '/readyz', undefined, ca.caCert);
        assert.equal(ready.status, 200, ready.body);
        const answer = await call(port, 'POST', '/mutate', JSON.stringify(REVIEW), ca.caCert);
        assert.equal(answer.status, 200, answer.body);
        const response = (JSON.parse(answer.body) as { response: { uid: string; allowed: boolean; patch?: string } }).response;
        assert.equal(response.uid, REVIEW.request.uid);
        assert.equal(response.allowed, true);
        assert.match(Buffer.from(response.patch ?? '', 'base64').toString(), /preStop/);
        // SIGTERM to the webhook process itself (as the kubelet's runtime sends it), not to buildah.
        process.kill(findPid((cmdline) => cmdline.includes('/app/bin/conndrain.mjs\0webhook') && cmdline.includes(`--port=${port}`)), 'SIGTERM');
        assert.equal(await webhook.exited, 0, `SIGTERM: exit 0\n${webhook.tail()}`);
        assert.ok(webhook.lines.some((l) => l.msg === 'webhook stopped'), `SIGTERM: a clean stop\n${webhook.tail()}`);
      } finally {
        ca.cleanup();
      }
    });

    it('--tls-mode=self-signed: creates its Secret and caBundle on the API stand-in, then serves with that CA', { timeout: 180_000 }, async (t) => {
      const certDir = join(dir, 'self-signed');
      mkdirSync(certDir);
      chmodSync(certDir, 0o777);
      api.plain.putMutatingWebhookConfiguration({
        apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'conndrain' },
        webhooks: [{ name: 'pods.conndrain.io', clientConfig: { service: { name: 'conndrain-webhook', namespace: 'conndrain-system', path: '/mutate' } } }],
      });
      const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig-host'));
      chmodSync(kubeconfig, 0o644);
      const webhook = new RunningImage(container(webhookTag), ['/nodejs/bin/node', '/app/bin/conndrain.mjs', 'webhook'], {
        caps: [],
        volumes: [certDir, kubeconfig],
        args: ['--address=127.0.0.1', `--port=${await freePort()}`, `--cert-dir=${certDir}`, '--tls-mode=self-signed', `--kubeconfig=${kubeconfig}`],
      });
      running.push(webhook);
      const port = await listeningPort(webhook, (m) => t.diagnostic(m));
      const secret = api.plain.getSecret('conndrain-system', 'conndrain-webhook-tls') as { data: Record<string, string> } | undefined;
      assert.ok(secret !== undefined);
      const caPem = Buffer.from(secret.data['ca.crt'] ?? '', 'base64').toString();
      const mwc = api.plain.getMutatingWebhookConfiguration('conndrain') as { webhooks: Array<{ clientConfig: { caBundle?: string } }> };
      assert.equal(mwc.webhooks[0]?.clientConfig.caBundle, secret.data['ca.crt']);
      const ready = await call(port, 'GET', '/readyz', undefined, caPem, 'conndrain-webhook.conndrain-system.svc');
      assert.equal(ready.status, 200, ready.body);
      await webhook.stop('SIGTERM');
    });
  });
  describe('npm run images -- --push to a registry on loopback, pulled back, run, pinned by npm run release', { skip: registryToolsProblem() ?? false }, () => {
    const registry = new LoopbackRegistry();
    const work = skip === false ? mkdtempSync(join(tmpdir(), 'cdpush-')) : '';
    const pulled: string[] = [];
    let images: SpawnSyncReturns<string> | undefined;
    let seconds = 0;
    let file: ImagesFile | undefined;
    const tls = '--tls-verify=false';
    const skopeo = (args: string[]): string => execFileSync('skopeo', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 20 * 60_000 });

    before(async () => {
      await registry.start();
      const started = Date.now();
      images = spawnSync(process.execPath, ['--conditions=conndrain-source', '--import', 'tsx', join(REPO, 'scripts/images/images.ts'),
        '--registry', registry.address, '--push', '--offline-base', tls, '--platforms', PLATFORMS, '--out', join(work, 'images.json')],
      { cwd: REPO, encoding: 'utf8', timeout: 80 * 60_000, maxBuffer: 64 * 1024 * 1024 });
      seconds = (Date.now() - started) / 1000;
      if (images.status === 0) file = JSON.parse(readFileSync(join(work, 'images.json'), 'utf8')) as ImagesFile;
    }, { timeout: 85 * 60_000 });

    after(async () => {
      for (const tag of pulled) spawnSync('buildah', ['rmi', tag], { stdio: 'ignore' });
      await registry.stop();
      rmSync(work, { recursive: true, force: true });
    });

    /** The platforms built: those asked for, less the ones the script skipped (with its reason). */
    const built = (): string[] => PLATFORMS.split(',').filter((p) => file?.skipped[p] === undefined);

    it('pushes one manifest list per image, holding every platform it could build; says why it skipped any', (t) => {
      assert.equal(images?.status, 0, `npm run images failed:\n${images?.stderr ?? ''}`);
      assert.ok(file !== undefined);
      t.diagnostic(`npm run images (${PLATFORMS}): ${seconds.toFixed(0)} s; built ${built().join(', ')}${Object.keys(file.skipped).length === 0 ? '' : `; skipped ${JSON.stringify(file.skipped)}`}`);
      assert.ok(built().includes(`linux/${hostArch()}`), 'this machine\'s platform is always built');
      for (const [platform, reason] of Object.entries(file.skipped)) {
        assert.ok(reason.length > 10, `${platform}: a reason`);
        assert.ok(images.stderr.includes(`SKIPPING ${platform}: ${reason}`), `${platform}: printed`);
      }
      assert.equal(file.pushed, true);
      assert.deepEqual(Object.keys(file.images).sort(), ['conndrain-agent', 'conndrain-webhook']);
      for (const [name, image] of Object.entries(file.images)) {
        assert.equal(image.repository, `${registry.address}/${name}`);
        assert.match(image.digest ?? '', /^sha256:[0-9a-f]{64}$/);
        // The registry serves the list under that digest, with one manifest per built platform.
        const raw = skopeo(['inspect', '--raw', tls, `docker://${image.repository}@${image.digest ?? ''}`]);
        assert.equal(`sha256:${createHash('sha256').update(raw).digest('hex')}`, image.digest, 'the digest is the list\'s');
        const list = JSON.parse(raw) as { mediaType: string; manifests: Array<{ digest: string; platform: { os: string; architecture: string } }> };
        assert.equal(list.mediaType, 'application/vnd.docker.distribution.manifest.list.v2+json');
        assert.deepEqual(list.manifests.map((m) => `${m.platform.os}/${m.platform.architecture}`).sort(), built().sort());
        assert.deepEqual(Object.fromEntries(list.manifests.map((m) => [`${m.platform.os}/${m.platform.architecture}`, m.digest])), image.platforms);
        // And by tag.
        assert.equal((JSON.parse(skopeo(['inspect', tls, '--raw', `docker://${image.repository}:${image.tag}`])) as { manifests: unknown[] }).manifests.length, built().length);
      }
    });

    it('pulls every list back (skopeo copy --all) and runs `conndrain --version` in each platform\'s image', { timeout: 30 * 60_000 }, (t) => {
      assert.ok(file !== undefined, 'npm run images failed');
      const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
      for (const [name, image] of Object.entries(file.images)) {
        const layout = `oci:${join(work, name)}:pulled`;
        skopeo(['copy', '--quiet', '--all', '--src-tls-verify=false', `docker://${image.repository}@${image.digest ?? ''}`, layout]);
        for (const platform of built()) {
          const arch = platform.split('/')[1] ?? '';
          const tag = `localhost/conndrain-pulled-${name}:${arch}`;
          skopeo(['copy', '--quiet', '--override-arch', arch, layout, `containers-storage:${tag}`]);
          pulled.push(tag);
          const config = inspectImage(tag);
          const c = container(tag);
          const started = Date.now();
          const out = execFileSync('buildah', ['run', '--isolation', 'chroot', c.id, '--', ...config.entrypoint, '--version'], { encoding: 'utf8', timeout: 10 * 60_000 });
          t.diagnostic(`${name} ${platform}: \`conndrain --version\` ${out.trim()} in ${Date.now() - started} ms`);
          assert.equal(out.trim(), version);
          // The image's Node (and the agent's addon) are that platform's machine code (ELF e_machine).
          const machine = (path: string): number => readFileSync(join(c.root, path)).readUInt16LE(18);
          const expected = { amd64: 62, arm64: 183 }[arch];
          assert.equal(machine('usr/local/bin/node'), expected, `${name} ${platform}: node`);
          if (name === 'conndrain-agent') assert.equal(machine('app/native/build/Release/netlink_native.node'), expected, `${name} ${platform}: addon`);
        }
      }
    });

    it('npm run release -- --images: every image of every install file is what was pushed, by digest', () => {
      assert.ok(file !== undefined, 'npm run images failed');
      const out = join(work, 'release');
      const release = spawnSync(process.execPath, ['--conditions=conndrain-source', '--import', 'tsx', join(REPO, 'scripts/release/release.ts'), out, '--no-cli', '--images', join(work, 'images.json')], { cwd: REPO, encoding: 'utf8' });
      assert.equal(release.status, 0, release.stderr);
      const pushed = Object.values(file.images).map((i) => `${i.repository}@${i.digest ?? ''}`);
      const yamls = readdirSync(out).filter((f) => f.endsWith('.yaml'));
      assert.ok(yamls.length >= 10);
      for (const yaml of yamls) {
        const refs = [...readFileSync(join(out, yaml), 'utf8').matchAll(/^\s*image: (\S+)$/gm)].map((m) => m[1] ?? '');
        assert.ok(refs.length >= 2, yaml);
        for (const ref of refs) assert.ok(pushed.includes(ref), `${yaml}: ${ref} is not one of ${pushed.join(', ')}`);
        assert.deepEqual([...new Set(refs)].sort(), pushed.sort(), `${yaml}: both images`);
      }
    });
  });
});

const REVIEW = {
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '7f0e4c3a-0000-4000-8000-0000000000aa', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'shop', operation: 'CREATE', userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'checkout-', namespace: 'shop', annotations: { 'conndrain.io/drain': '30s' } }, spec: { containers: [{ name: 'app', image: 'x' }] } },
  },
};

/** The node process (not buildah) whose command line passes `test`, in network namespace `ns` when given. */
function findPid(test: (cmdline: string) => boolean, ns?: string): number {
  const nsInode = ns === undefined ? undefined : statSync(`/run/netns/${ns}`).ino;
  const pid = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
    try {
      return (nsInode === undefined || statSync(`/proc/${p}/ns/net`).ino === nsInode) && readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'node' && test(readFileSync(`/proc/${p}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
  if (pid === undefined) throw new Error('the process is not running');
  return Number(pid);
}

/** The port from the webhook's "webhook listening" log line; reports the start-up time. */
async function listeningPort(webhook: RunningImage, report: (message: string) => void): Promise<number> {
  await until('webhook listening', () => webhook.lines.some((l) => l.msg === 'webhook listening') || webhook.stderr.some((l) => /exited with status/.test(l)), 120_000);
  const line = webhook.lines.find((l) => l.msg === 'webhook listening');
  if (line === undefined) throw new Error(`the webhook did not start\n${webhook.tail()}`);
  report(`webhook image: listening ${Date.now() - webhook.startedAt} ms after \`buildah run\``);
  return Number(line.port);
}

/** A port free on 127.0.0.1 now (the webhook's --port must be 1..65535). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function call(port: number, method: string, path: string, body: string | undefined, ca: string, servername = 'localhost'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, ca, servername, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
