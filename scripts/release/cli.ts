/**
 * The CLI's part of `npm run release` (release.ts, after the install files): the npm package
 * (`npm pack`, which builds the CLI first: package.json "prepack") and the krew plugin
 * manifest that installs it as `kubectl conndrain`, both written into the release directory
 * and added to its SHA256SUMS. `downloadUrl` is where the release's files are published: the
 * krew archive's `uri` is <downloadUrl>/<tarball>.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderKrewManifest } from './krew.js';
import { REPO_ROOT, sha256 } from './render.js';

export const KREW_MANIFEST = 'conndrain.krew.yaml';

/**
 * Runs `npm pack` into `out`; returns the tarball's file name (npm's `<name>-<version>.tgz`).
 * Its output is not parsed: the prepack build writes to the same stdout as `--json` would.
 */
function packInto(out: string, version: string): string {
  execFileSync('npm', ['pack', '--pack-destination', out], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const tarball = `conndrain-${version}.tgz`;
  if (!existsSync(join(out, tarball))) throw new Error(`npm pack wrote no ${tarball} into ${out}`);
  return tarball;
}

/** SHA256SUMS with `files`' lines replaced by their current digests (`sha256sum -c` format). */
function updateSums(out: string, files: readonly string[]): void {
  const path = join(out, 'SHA256SUMS');
  const kept = existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line !== '' && !files.includes(line.split('  ')[1] ?? '')) : [];
  const added = files.map((file) => `${sha256(readFileSync(join(out, file)))}  ${file}`);
  writeFileSync(path, [...kept, ...added].map((line) => `${line}\n`).join(''));
}

/** The GitHub release of `version`: where the krew manifest points unless told otherwise. */
export function defaultDownloadUrl(version: string): string {
  return `https://github.com/conndrain/conndrain/releases/download/v${version}`;
}

/** Writes the package and the krew manifest into `out`; returns the files written. */
export function releaseCli(out: string, version: string, downloadUrl: string): string[] {
  mkdirSync(out, { recursive: true });
  const tarball = packInto(out, version);
  const digest = sha256(readFileSync(join(out, tarball)));
  const uri = `${downloadUrl.replace(/\/+$/, '')}/${tarball}`;
  writeFileSync(join(out, KREW_MANIFEST), renderKrewManifest(version, [{ arch: process.arch, uri, sha256: digest }]));
  updateSums(out, [tarball, KREW_MANIFEST]);
  return [tarball, KREW_MANIFEST];
}
