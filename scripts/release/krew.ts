/**
 * The krew plugin manifest of `kubectl conndrain` (krew.googlecontainertools.github.com/v1alpha2
 * Plugin): one platform per archive, each archive the npm tarball itself (`npm pack`), which
 * holds the compiled CLI and every runtime package, netlink-native's addon included, under
 * `package/`; krew unpacks it and links bin/kubectl-conndrain.cjs onto PATH. The addon is
 * compiled for the machine that packed (Linux, its architecture), so one archive serves one
 * platform; Node.js itself is not in the archive (the caveats say so).
 */
import { stringify } from 'yaml';

/** An archive of the plugin: where krew downloads it and its digest. */
export interface KrewArchive {
  /** Node's process.arch of the machine that built the addon (x64, arm64). */
  arch: string;
  uri: string;
  sha256: string;
}

/** process.arch -> krew's (Go's) architecture label. */
const KREW_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };

/** The path krew links as `kubectl-conndrain`, inside the unpacked archive. */
export const KREW_BIN = 'bin/kubectl-conndrain.cjs';

export function krewArch(nodeArch: string): string {
  const arch = KREW_ARCH[nodeArch];
  if (arch === undefined) throw new Error(`no krew platform for the architecture ${nodeArch} (known: ${Object.keys(KREW_ARCH).join(', ')})`);
  return arch;
}

export function renderKrewManifest(version: string, archives: readonly KrewArchive[]): string {
  const manifest = {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: 'conndrain' },
    spec: {
      version: `v${version}`,
      homepage: 'https://github.com/conndrain/conndrain',
      shortDescription: 'Preview drain-hook injection and find ghost conntrack entries',
      description: [
        'conndrain keeps client connections alive while pods drain. The plugin rewrites manifests the',
        'way its admission webhook would (inject), answers AdmissionReviews (review), and on a node',
        'finds ghost conntrack entries (stale) and checks the kernel (doctor).',
      ].join('\n'),
      caveats: 'The plugin runs on Node.js (>= 20.9), which must be on PATH as `node`.\n`stale` and `doctor` read a node\'s kernel: run them on the node or in `kubectl debug node/...`.',
      platforms: archives.map((archive) => ({
        selector: { matchLabels: { os: 'linux', arch: krewArch(archive.arch) } },
        uri: archive.uri,
        sha256: archive.sha256,
        files: [{ from: 'package/*', to: '.' }],
        bin: KREW_BIN,
      })),
    },
  };
  return stringify(manifest, { lineWidth: 0 });
}
