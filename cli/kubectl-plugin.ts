/**
 * `kubectl conndrain ...`: the commands an operator runs from a laptop, under kubectl's plugin
 * naming (an executable `kubectl-conndrain` on PATH, as krew installs plugins):
 *   inject  rewrite manifests the way the webhook would
 *   review  answer an AdmissionReview the way the webhook would
 *   stale   ghost conntrack entries of a node (--kubeconfig for the EndpointSlices)
 *   doctor  what the node's kernel offers conndrain
 *   check   the install's health from the API server (like `linkerd check`)
 * The same commands as `conndrain inject|review|conntrack stale|doctor|check`; the daemons (webhook,
 * agent) and the lab are not part of the plugin.
 */
import { Command } from 'commander';
import { PLUGIN_LISTINGS } from './command-listings.js';
import { fixHelpWidth } from './help-width.js';
import { addListedCommands } from './lazy-command.js';
import { applyUsageErrorRule } from './usage-error.js';
import { VERSION } from './version.js';

export const PLUGIN_COMMANDS: readonly string[] = PLUGIN_LISTINGS.map((listing) => listing.name);

export function buildPluginProgram(): Command {
  const program = new Command('kubectl conndrain')
    .description('conndrain for operators: preview and check drain-hook injection, find ghost conntrack entries, check a node. Installed on PATH as kubectl-conndrain by `npm install -g` of the conndrain package (docs/install.md).')
    .version(VERSION);
  return applyUsageErrorRule(addListedCommands(fixHelpWidth(program), PLUGIN_LISTINGS));
}
