/**
 * `npm run release [-- <dir>]`: writes <dir>/<overlay>.yaml (default dir: dist/install) for
 * every supported kustomization and <dir>/SHA256SUMS (`sha256sum -c SHA256SUMS` format).
 * Refuses (exit status 1, nothing written) when an image tag or version label disagrees with
 * package.json's version.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageVersion, RELEASE_OVERLAYS, releaseText, renderObjects, REPO_ROOT, sha256, versionProblems } from './render.js';

function release(out: string): boolean {
  const version = packageVersion();
  const files: Array<[string, string]> = [];
  for (const [name, dir] of RELEASE_OVERLAYS) {
    const objects = renderObjects(dir);
    const problems = versionProblems(objects, version);
    if (problems.length > 0) {
      process.stderr.write(`release: ${dir} does not match version ${version}:\n  ${problems.join('\n  ')}\n`);
      return false;
    }
    files.push([`${name}.yaml`, releaseText(name, dir, objects, version)]);
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

if (!release(resolve(process.argv[2] ?? join(REPO_ROOT, 'dist/install')))) process.exitCode = 1;
