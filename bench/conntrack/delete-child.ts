/**
 * One deleteConntrack call in a fresh process, so its peak RSS growth is measured alone:
 *   node --import tsx bench/conntrack/delete-child.ts <netns> <addresses-comma-separated>
 * Prints one JSON line: { result, diagnostics, rssBeforeBytes, maxRssAfterBytes }.
 */
import { openNetlink } from 'netlink-native';
import { lastDelete } from 'netlink-native/testing';

const [netns, list] = process.argv.slice(2);
if (netns === undefined || list === undefined) {
  process.stderr.write('usage: delete-child.ts <netns> <addresses,...>\n');
  process.exit(2);
}
const api = openNetlink({ netns });
global.gc?.();
const rssBefore = process.memoryUsage().rss;
const maxBefore = process.resourceUsage().maxRSS * 1024;
const result = await api.deleteConntrack({ addresses: list.split(','), match: ['replySrc', 'origDst'], protocols: ['tcp', 'udp', 'sctp', 'ipip'] });
const maxAfter = process.resourceUsage().maxRSS * 1024;
api.close();
process.stdout.write(`${JSON.stringify({ result, diagnostics: lastDelete(api), rssBeforeBytes: rssBefore, maxRssBeforeBytes: maxBefore, maxRssAfterBytes: maxAfter })}\n`);
