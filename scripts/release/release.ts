/**
 * `npm run release [-- <dir>] [--images FILE] [--download-url URL] [--no-cli]`: writes <dir>/<overlay>.yaml
 * (default dir: dist/release/conndrain-<version>, the directory docs/upgrade.md names) for
 * every supported kustomization and <dir>/SHA256SUMS (`sha256sum -c SHA256SUMS` format), then
 * the CLI's npm package and its krew manifest (cli.ts; not with --no-cli), whose archive URL is
 * URL/<tarball> (default: the version's GitHub release).
 * Refuses (exit status 1, nothing written) when an image tag or version label disagrees with
 * package.json's version.
 * --images FILE: the file `npm run images -- --registry R --push` wrote (dist/images/conndrain-<version>.json);
 * every conndrain image is then the pushed manifest list by digest, `R/conndrain-agent@sha256:...`,
 * instead of the manifests' ghcr.io/conndrain/...:<version> tags. Refuses a file of another
 * version or one that was not pushed.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultDownloadUrl, releaseCli } from './cli.js';
import { packageVersion, pinImages, readPushedImages, RELEASE_OVERLAYS, releaseDir, releaseText, renderObjects, sha256, versionProblems } from './render.js';

function release(out: string, imagesFile: string | undefined): boolean {
  const version = packageVersion();
  const files: Array<[string, string]> = [];
  let refs: Map<string, string> | undefined;
  if (imagesFile !== undefined) {
    try {
      refs = readPushedImages(imagesFile, version);
    } catch (error) {
      process.stderr.write(`release: --images ${(error as Error).message}\n`);
      return false;
    }
  }
  for (const [name, dir] of RELEASE_OVERLAYS) {
    const objects = renderObjects(dir);
    const problems = versionProblems(objects, version);
    if (problems.length > 0) {
      process.stderr.write(`release: ${dir} does not match version ${version}:\n  ${problems.join('\n  ')}\n`);
      return false;
    }
    files.push([`${name}.yaml`, releaseText(name, dir, refs === undefined ? objects : pinImages(objects, refs), version, refs)]);
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const [file, text] of files) {
    writeFileSync(join(out, file), text);
    process.stdout.write(`${join(out, file)}\n`);
  }
  writeFileSync(join(out, 'SHA256SUMS'), files.map(([file, text]) => `${sha256(text)}  ${file}\n`).join(''));
  process.stdout.write(`${join(out, 'SHA256SUMS')}  (conndrain ${version})\n`);
  return true;
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { images: { type: 'string' }, 'download-url': { type: 'string' }, 'no-cli': { type: 'boolean', default: false } } });
const version = packageVersion();
const out = resolve(positionals[0] ?? releaseDir(version));
if (!release(out, values.images === undefined ? undefined : resolve(values.images))) process.exitCode = 1;
else if (!values['no-cli']) {
  for (const file of releaseCli(out, version, values['download-url'] ?? defaultDownloadUrl(version))) process.stdout.write(`${join(out, file)}\n`);
}
