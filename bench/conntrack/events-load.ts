/**
 * Load generator of bench/conntrack/events.ts, in a process of its own so its CPU (and the
 * kernel work its inserts cause, event building and BPF filtering included) is not charged to
 * the process holding the index:
 *   node --import tsx bench/conntrack/events-load.ts <netns> <flows-per-second> <seconds> <tag 0..200>
 * Creates NEW conntrack entries for unrelated addresses in batches every 50 ms and prints one
 * JSON line { created, failed, seconds }.
 */
import { openNetlink } from 'netlink-native';
import { insertConntrackForTest } from 'netlink-native/testing';

const [netns, rateText, secondsText, tagText] = process.argv.slice(2);
if (netns === undefined || rateText === undefined || secondsText === undefined || tagText === undefined) {
  process.stderr.write('usage: events-load.ts <netns> <flows-per-second> <seconds> <tag>\n');
  process.exit(2);
}
const rate = Number(rateText);
const seconds = Number(secondsText);
const tag = Number(tagText);
const TICK_MS = 50;
const perTick = Math.round((rate * TICK_MS) / 1000);
const api = openNetlink({ netns });
const t0 = performance.now();
let created = 0;
let failed = 0;
for (let tick = 0; (performance.now() - t0) / 1000 < seconds; tick++) {
  // unrelated flows: clients 10.60+tag.x.y -> a VIP, DNATed to backends in 10.130.0.0/16
  const r = await insertConntrackForTest(api, [
    { protocol: 'tcp', origSrc: `10.${60 + tag}.${tick % 250}.1`, srcCount: 200, srcPort: 1024, origDst: '10.96.5.5', dstPort: 80, replySrc: '10.130.0.1', replySrcCount: 5000, count: perTick, state: 'SYN_SENT', timeout: 120 },
  ]);
  created += r.created;
  failed += r.failed + r.exists;
  const next = t0 + (tick + 1) * TICK_MS;
  const wait = next - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
api.close();
process.stdout.write(`${JSON.stringify({ created, failed, seconds: (performance.now() - t0) / 1000 })}\n`);
