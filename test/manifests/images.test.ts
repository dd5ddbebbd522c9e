/**
 * The Dockerfiles, checked by reading them (no Docker engine runs here): every COPY source
 * exists in the repository and survives .dockerignore, or is produced by the stage it is
 * copied from; the webhook image never meets a compiler or the native addon; the runtime
 * bases are Node 24; the users agree with the manifests' securityContext.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { AGENT_OPTIONS } from '../../src/config/agent.js';
import { WEBHOOK_OPTIONS } from '../../src/config/webhook.js';
import { copiesOf, isIgnored, parseDockerfile, wordsOf, workdirAt, type Stage } from './dockerfile.js';
import { AGENT_DAEMONSET, daemonSet, deployment, onlyContainer, podSpecOf, WEBHOOK_DEPLOYMENT } from './objects.js';
import { KUBECTL_MISSING, render, REPO_ROOT } from './render.js';

const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');
const dockerignore = read('.dockerignore');
const webhook = parseDockerfile(read('images/webhook.Dockerfile'));
const agent = parseDockerfile(read('images/agent.Dockerfile'));
const outDir = (JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string } }).compilerOptions.outDir;
const postinstall = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.postinstall ?? '';
const bindingGyp = read('native/binding.gyp');
const addonTarget = /"target_name"\s*:\s*"(\w+)"/.exec(bindingGyp)?.[1];

/** What a stage has at an absolute path: copied into it, or made by one of its RUN steps. */
function produces(stage: Stage, path: string): boolean {
  const copied = copiesOf(stage).some((c) => c.targets.some((t) => path === t || path.startsWith(`${t}/`)));
  if (copied) return true;
  return stage.instructions.filter((i) => i.keyword === 'RUN').some((run) => {
    const wd = workdirAt(stage, run);
    const made: string[] = [];
    if (/\bnpm ci\b/.test(run.args)) {
      made.push(posix.join(wd, 'node_modules'));
      if (!run.args.includes('--ignore-scripts') && postinstall.includes('native/scripts/build.mjs') && addonTarget !== undefined) {
        // the netlink-native workspace: its addon and its compiled TypeScript
        made.push(posix.join(wd, 'native/build/Release', `${addonTarget}.node`), posix.join(wd, 'native/dist'));
      }
    }
    if (/\bnpm run build\b/.test(run.args)) made.push(posix.join(wd, outDir), posix.join(wd, 'native/dist'));
    return made.some((m) => path === m || path.startsWith(`${m}/`));
  });
}

function runtimeOf(stages: Stage[]): Stage {
  const last = stages.at(-1);
  if (last === undefined) throw new Error('no stage');
  return last;
}

function lastValue(stage: Stage, keyword: string): string | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1)?.args.trim();
}

for (const [file, stages] of [['images/webhook.Dockerfile', webhook], ['images/agent.Dockerfile', agent]] as const) {
  describe(file, () => {
    it('copies from the build context only files that exist and .dockerignore lets through', () => {
      const problems: string[] = [];
      for (const stage of stages) {
        for (const copy of copiesOf(stage).filter((c) => c.from === undefined)) {
          for (const source of copy.sources) {
            if (!existsSync(join(REPO_ROOT, source))) problems.push(`line ${copy.line}: ${source} does not exist`);
            if (isIgnored(source, dockerignore)) problems.push(`line ${copy.line}: ${source} is excluded by .dockerignore`);
          }
        }
      }
      assert.deepEqual(problems, []);
    });

    it('copies from a stage only what that stage copied in or built', () => {
      const problems: string[] = [];
      for (const stage of stages) {
        for (const copy of copiesOf(stage).filter((c) => c.from !== undefined)) {
          const origin = stages.find((s) => s.name === copy.from);
          if (origin === undefined) problems.push(`line ${copy.line}: no stage ${copy.from ?? ''}`);
          else for (const source of copy.sources) if (!produces(origin, source)) problems.push(`line ${copy.line}: stage ${origin.name} has no ${source}`);
        }
      }
      assert.deepEqual(problems, []);
    });

    it('runs on Node 24, has no HEALTHCHECK, and starts the conndrain CLI', () => {
      const runtime = runtimeOf(stages);
      assert.match(runtime.base, /(^|\/)(node:24[-.]|nodejs24-)/, `runtime base ${runtime.base}`);
      for (const stage of stages) assert.match(stage.base, /(^|\/)(node:24[-.]|nodejs24-)/, `${stage.name}: ${stage.base}`);
      assert.ok(stages.every((s) => s.instructions.every((i) => i.keyword !== 'HEALTHCHECK')));
      const entrypoint = wordsOf(lastValue(runtime, 'ENTRYPOINT') ?? '[]');
      assert.equal(entrypoint.at(-1), '/app/bin/conndrain.mjs');
      assert.ok(produces(runtime, '/app/bin/conndrain.mjs') && produces(runtime, `/app/${outDir}/cli/main.js`), 'the CLI and its compiled program are in the image');
    });

    it('ships production dependencies only (pruned after the build)', () => {
      const runtime = runtimeOf(stages);
      const copy = copiesOf(runtime).find((c) => c.sources.some((s) => s.endsWith('/node_modules')));
      const origin = stages.find((s) => s.name === copy?.from);
      assert.ok(origin !== undefined, 'node_modules comes from a build stage');
      const runs = origin.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
      const build = runs.findIndex((r) => /\bnpm run build\b/.test(r));
      assert.ok(runs.some((r, i) => i >= build && /npm prune --omit=dev|npm ci [^&]*--omit=dev/.test(r)), 'npm prune --omit=dev after the build');
    });
  });
}

describe('webhook image', () => {
  it('never meets a compiler or the native addon', () => {
    const forbidden = /build-essential|\bgcc\b|\bg\+\+|\bclang\b|\bmake\b|python3|node-gyp|binding\.gyp|native\/(src|build|scripts)|\.node\b|npm rebuild|npm_config_nodedir/;
    for (const stage of webhook) {
      for (const instruction of stage.instructions) assert.doesNotMatch(`${instruction.keyword} ${instruction.args}`, forbidden, `line ${instruction.line}`);
      for (const copy of copiesOf(stage)) for (const source of copy.sources) {
        if (source.startsWith('native')) assert.ok(['native/lib', 'native/package.json', 'native/tsconfig.json'].includes(source), `line ${copy.line}: only netlink-native's TypeScript (lib, package.json, tsconfig.json) may be copied, not ${source}`);
      }
      for (const run of stage.instructions.filter((i) => i.keyword === 'RUN' && /\bnpm (ci|install)\b/.test(i.args))) {
        assert.match(run.args, /--ignore-scripts/, `line ${run.line}: install scripts would build the addon`);
      }
    }
  });

  it('runs as the non-root user the Deployment expects, and exposes --port', { skip: KUBECTL_MISSING }, () => {
    const runtime = runtimeOf(webhook);
    const uid = Number((lastValue(runtime, 'USER') ?? '0').split(':')[0]);
    assert.ok(uid > 0, 'non-root');
    const pod = podSpecOf(deployment(render('manifests'), WEBHOOK_DEPLOYMENT));
    assert.equal(pod.securityContext?.runAsUser, uid);
    assert.ok(wordsOf(lastValue(runtime, 'EXPOSE') ?? '').includes(String(WEBHOOK_OPTIONS.port.default)));
    assert.deepEqual(wordsOf(lastValue(runtime, 'CMD') ?? '[]'), ['webhook']);
  });
});

describe('agent image', () => {
  it('builds the addon in the build stage and ships only the .node file and the package\'s JavaScript', () => {
    assert.ok(addonTarget !== undefined, 'binding.gyp names a target');
    const [build, runtime] = [agent.find((s) => s.name === 'build'), runtimeOf(agent)];
    assert.ok(build !== undefined);
    assert.ok(build.instructions.some((i) => i.keyword === 'RUN' && /build-essential/.test(i.args) && /python3/.test(i.args)));
    assert.ok(produces(build, `/src/native/build/Release/${addonTarget}.node`), 'npm ci (postinstall) builds the addon');
    const shipped = copiesOf(runtime).filter((c) => c.sources.some((s) => s.includes('native/')));
    assert.deepEqual(shipped.flatMap((c) => c.targets), ['/app/native/package.json', '/app/native/dist', `/app/native/build/Release/${addonTarget}.node`]);
    assert.ok(!runtime.instructions.some((i) => /build-essential|python3|\bgcc\b/.test(i.args)), 'no compiler at run time');
  });

  it('has every file binding.gyp compiles in the build stage before `npm ci` runs node-gyp', () => {
    const build = agent.find((s) => s.name === 'build');
    assert.ok(build !== undefined);
    const npmCi = build.instructions.find((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
    assert.ok(npmCi !== undefined);
    const before = { ...build, instructions: build.instructions.filter((i) => i.line < npmCi.line) };
    const sources = [...bindingGyp.matchAll(/"((?:src|include)\/[^"]+)"/g)].map((m) => m[1] ?? '');
    assert.ok(sources.length > 0, 'binding.gyp lists its sources');
    for (const path of ['package.json', 'scripts/build.mjs', 'binding.gyp', ...sources]) {
      assert.ok(existsSync(join(REPO_ROOT, 'native', path)), `native/${path} exists`);
      assert.ok(produces(before, posix.join(workdirAt(build, npmCi), 'native', path)), `native/${path} is copied before npm ci`);
    }
    const headers = readFileSync(join(REPO_ROOT, 'native/src/addon.c'), 'utf8').match(/#include "([^"]+)"/g) ?? [];
    for (const header of headers) {
      const name = /"([^"]+)"/.exec(header)?.[1] ?? '';
      assert.ok(existsSync(join(REPO_ROOT, 'native/src', name)), `native/src/${name} (included by addon.c) is under the copied native/src`);
    }
  });

  it('installs at run time every library the addon links', () => {
    const linked = [...bindingGyp.matchAll(/["']-l([\w+-]+)["']/g)].map((m) => m[1] ?? '');
    const runtimeText = runtimeOf(agent).instructions.map((i) => i.args).join('\n');
    for (const lib of linked) assert.match(runtimeText, new RegExp(`\\blib${lib}\\w*`), `the addon links -l${lib}`);
    const debian = (base: string): string | undefined => /(bookworm|bullseye|trixie|debian\d+)/.exec(base)?.[1];
    assert.equal(debian(runtimeOf(agent).base), debian(agent[0]?.base ?? ''), 'same Debian release (glibc) as the build');
  });

  it('runs as the user the DaemonSet expects (root, for NET_ADMIN) and exposes its ports', { skip: KUBECTL_MISSING }, () => {
    const runtime = runtimeOf(agent);
    const container = onlyContainer(daemonSet(render('manifests'), AGENT_DAEMONSET));
    assert.equal(Number((lastValue(runtime, 'USER') ?? '').split(':')[0]), container.securityContext?.runAsUser);
    const exposed = wordsOf(lastValue(runtime, 'EXPOSE') ?? '');
    for (const port of [AGENT_OPTIONS.drainPort.default, AGENT_OPTIONS.metricsPort.default]) assert.ok(exposed.includes(String(port)), `EXPOSE ${port}`);
    assert.deepEqual(wordsOf(lastValue(runtime, 'CMD') ?? '[]'), ['agent']);
  });
});

describe('the Dockerfile reader', () => {
  it('joins continuations, resolves WORKDIR and reads .dockerignore like Docker', () => {
    const [stage] = parseDockerfile('FROM node:24 AS b\nWORKDIR /src\n# note\nCOPY a b ./x/\nRUN one \\\n two\n');
    assert.ok(stage !== undefined);
    assert.deepEqual(copiesOf(stage)[0]?.targets, ['/src/x/a', '/src/x/b']);
    assert.equal(stage.instructions.at(-1)?.args, 'one  two');
    assert.equal(isIgnored('native/build/Release/x.node', 'native/build'), true);
    assert.equal(isIgnored('agent/x/node_modules/y', '**/node_modules'), true);
    assert.equal(isIgnored('test/lab/x.ts', 'test/lab/results'), false);
    assert.equal(isIgnored('a.md', '*.md\n!a.md'), false);
  });

  it('catches a COPY of something that does not exist', () => {
    const [stage] = parseDockerfile('FROM node:24 AS b\nWORKDIR /src\nCOPY src ./src\nRUN npm ci\n');
    assert.ok(stage !== undefined);
    assert.equal(produces(stage, '/src/src/contract.ts'), true);
    assert.equal(produces(stage, '/src/node_modules'), true);
    assert.equal(produces(stage, '/src/dist'), false);
  });
});
