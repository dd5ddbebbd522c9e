/**
 * The release's install files: one YAML stream per supported kustomization, rendered by the
 * real `kubectl kustomize`, with CustomResourceDefinitions left out (the CRDs of optional
 * integrations, cert-manager and the Prometheus Operator, are installed by those projects),
 * stamped with the version from package.json. Used by `npm run release` (release.ts) and by
 * its test (release.test.ts), which re-renders and compares.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';

export const REPO_ROOT = new URL('../../', import.meta.url).pathname;

/** File name (without .yaml) -> kustomization directory. `default` is `kubectl apply -k manifests/`. */
export const RELEASE_OVERLAYS: ReadonlyArray<readonly [string, string]> = [
  ['default', 'manifests'],
  ['conntrack-only', 'manifests/overlays/conntrack-only'],
  ['hook-agent', 'manifests/overlays/hook-agent'],
  ['hook-exec', 'manifests/overlays/hook-exec'],
  ['janitor', 'manifests/overlays/janitor'],
  ['monitoring', 'manifests/overlays/monitoring'],
  ['production', 'manifests/overlays/production'],
  ['self-signed', 'manifests/overlays/self-signed'],
  ['high-availability', 'manifests/overlays/high-availability'],
  ['rollout-fast', 'manifests/overlays/rollout-fast'],
];

export type ReleaseObject = Record<string, unknown> & { kind?: string; apiVersion?: string; metadata?: { name?: string; labels?: Record<string, string> } };

/** The versioned directory of a release's files (docs/install.md, docs/upgrade.md). */
export function releaseDir(version: string): string {
  return join(REPO_ROOT, 'dist', 'release', `conndrain-${version}`);
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** `kubectl kustomize <dir>` parsed, CRDs dropped. Throws kubectl's error. */
export function renderObjects(dir: string): ReleaseObject[] {
  const text = execFileSync('kubectl', ['kustomize', join(REPO_ROOT, dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${dir}: ${doc.errors[0]?.message ?? 'YAML error'}`);
      return doc.toJS() as ReleaseObject | null;
    })
    .filter((o): o is ReleaseObject => o !== null && o.kind !== 'CustomResourceDefinition');
}

/** Where the objects disagree with the release version (image tags, version labels). */
export function versionProblems(objects: ReleaseObject[], version: string): string[] {
  const problems: string[] = [];
  const visit = (value: unknown, where: string): void => {
    if (Array.isArray(value)) value.forEach((v, i) => visit(v, `${where}[${i}]`));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'image' && typeof v === 'string' && v.includes('conndrain') && !v.endsWith(`:${version}`)) problems.push(`${where}.image ${v} is not tagged ${version}`);
        else if (k === 'app.kubernetes.io/version' && v !== version) problems.push(`${where} label app.kubernetes.io/version=${String(v)}`);
        else visit(v, `${where}.${k}`);
      }
    }
  };
  for (const o of objects) visit(o, `${o.kind ?? '?'}/${o.metadata?.name ?? '?'}`);
  return problems;
}

/**
 * What `npm run images -- --push` wrote (scripts/images/images.ts): per image its repository
 * and the pushed manifest list's digest.
 */
export interface PushedImages {
  version: string;
  pushed: boolean;
  images: Record<string, { repository: string; tag: string; digest?: string }>;
}

/** Reads an images file; throws when it is not a push of `version` covering both images. */
export function readPushedImages(path: string, version: string): Map<string, string> {
  const file = JSON.parse(readFileSync(path, 'utf8')) as PushedImages;
  if (file.version !== version) throw new Error(`${path} is for version ${file.version}, not ${version}`);
  if (!file.pushed) throw new Error(`${path}: the images were built but not pushed (npm run images -- --push)`);
  const refs = new Map<string, string>();
  for (const name of ['conndrain-agent', 'conndrain-webhook']) {
    const image = file.images[name];
    if (image?.digest === undefined || !/^sha256:[0-9a-f]{64}$/.test(image.digest)) throw new Error(`${path}: no pushed digest for ${name}`);
    refs.set(name, `${image.repository}@${image.digest}`);
  }
  return refs;
}

/**
 * The objects with every conndrain image (`.../conndrain-agent:<version>`, `.../conndrain-webhook:<version>`)
 * replaced by `refs`' `repository@sha256:...`. Run after versionProblems, which checks the tags.
 */
export function pinImages(objects: ReleaseObject[], refs: ReadonlyMap<string, string>): ReleaseObject[] {
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => {
      if (k === 'image' && typeof v === 'string') {
        const name = /(?:^|\/)(conndrain-[a-z]+)(?::[^/@]+)?$/.exec(v)?.[1];
        const ref = name === undefined ? undefined : refs.get(name);
        if (ref !== undefined) return [k, ref];
      }
      return [k, visit(v)];
    }));
  };
  return objects.map((o) => visit(o) as ReleaseObject);
}

/** The file's text: a header naming version and source, then the objects as one YAML stream. */
export function releaseText(name: string, dir: string, objects: ReleaseObject[], version: string, refs?: ReadonlyMap<string, string>): string {
  const header = [
    `# conndrain ${version}: ${name} install (kubectl apply -f ${name}.yaml)`,
    `# Rendered by \`npm run release\` from \`kubectl kustomize ${dir}\`; CustomResourceDefinitions excluded.`,
    ...(refs === undefined ? [] : [`# Images pinned to what \`npm run images -- --push\` pushed: ${[...refs.values()].join(', ')}`]),
  ].join('\n');
  return `${header}\n${objects.map((o) => `---\n${stringify(o, { lineWidth: 0 })}`).join('')}`;
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}
