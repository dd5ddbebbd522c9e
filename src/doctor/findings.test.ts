import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnose, hasProblem, parseConntrackStat, sumMetric, type DoctorReadings, type Finding } from './index.js';

const healthy: DoctorReadings = {
  conntrackCount: 100,
  conntrackMax: 1000,
  cpus: [{ cpu: 0, insertFailed: 0, drop: 0, earlyDrop: 0 }, { cpu: 1, insertFailed: 0, drop: 0, earlyDrop: 0 }],
  netfilter: { nf_conntrack_tcp_timeout_established: '86400', nf_conntrack_udp_timeout: '30', nf_conntrack_udp_timeout_stream: '120' },
  ipvs: { expire_nodest_conn: '1', sloppy_tcp: '1', conn_reuse_mode: '1', expire_quiescent_template: '1' },
  kernelRelease: '6.1.0-30-amd64',
  agent: { url: 'http://127.0.0.1:9902', health: { status: 200 }, serversHeld: 3, ipvsAvailable: 1 },
  stale: { byProtocol: {}, topServices: [] },
};

function byCheck(findings: Finding[]): Map<string, Finding> {
  return new Map(findings.map((f) => [f.check, f]));
}

describe('diagnose', () => {
  it('finds nothing wrong on a well-set node, and says what each value means', () => {
    const findings = diagnose(healthy);
    assert.equal(hasProblem(findings), false, JSON.stringify(findings.filter((f) => f.problem)));
    const f = byCheck(findings);
    assert.equal(f.get('conntrack.fill')?.value, '100/1000 (10%)');
    assert.equal(f.get('ipvs.sloppy_tcp')?.value, 1);
    assert.equal(f.get('agent.ipvs_servers_held')?.value, 3);
    assert.equal(f.get('conntrack.stale')?.value, 0);
    for (const finding of findings) assert.ok(finding.why.length > 20, finding.check);
  });

  it('flags each bad reading with a why that names the fix', () => {
    const f = byCheck(diagnose({
      ...healthy,
      conntrackCount: 900,
      cpus: [{ cpu: 0, insertFailed: 0, drop: 0, earlyDrop: 0 }, { cpu: 1, insertFailed: 7, drop: 2, earlyDrop: 5 }],
      netfilter: { nf_conntrack_tcp_timeout_established: '432000', nf_conntrack_udp_timeout: '120', nf_conntrack_udp_timeout_stream: '300' },
      ipvs: { expire_nodest_conn: '0', sloppy_tcp: '0', conn_reuse_mode: '0', expire_quiescent_template: '0' },
      agent: { url: 'http://127.0.0.1:9902', health: { error: 'ECONNREFUSED' }, serversHeld: undefined },
      stale: { byProtocol: { udp: 4, tcp: 1 }, topServices: [{ service: 'udp 10.96.0.10:53', count: 4 }] },
    }));
    const expect: Array<[string, unknown, RegExp]> = [
      ['conntrack.fill', '900/1000 (90%)', /nf_conntrack_max/],
      ['conntrack.insert_failed', 7, /cpu1=7/],
      ['conntrack.drop', 2, /cpu1=2/],
      ['conntrack.early_drop', 5, /evicted/],
      ['sysctl.nf_conntrack_tcp_timeout_established', 432000, /5 days.*86400/],
      ['sysctl.nf_conntrack_udp_timeout', 120, /Lower it to 60/],
      ['sysctl.nf_conntrack_udp_timeout_stream', 300, /Lower it to 180/],
      ['ipvs.expire_nodest_conn', 0, /expire_nodest_conn=1/],
      ['ipvs.sloppy_tcp', 0, /sloppy_tcp=1/],
      ['ipvs.conn_reuse_mode', 0, /conn_reuse_mode=1/],
      ['ipvs.expire_quiescent_template', 0, /expire_quiescent_template=1/],
      ['agent', 'unreachable (ECONNREFUSED)', /DaemonSet/],
      ['conntrack.stale', 5, /udp=4 tcp=1.*udp 10\.96\.0\.10:53 \(4\)/],
    ];
    for (const [check, value, why] of expect) {
      const finding = f.get(check);
      assert.ok(finding, check);
      assert.equal(finding.value, value, check);
      assert.equal(finding.problem, true, check);
      assert.match(finding.why, why, check);
    }
  });

  it('says IPVS is absent without calling it a problem, and skips its sysctls', () => {
    const findings = diagnose({ ...healthy, ipvs: undefined });
    const ipvs = findings.filter((f) => f.check.startsWith('ipvs'));
    assert.deepEqual(ipvs.map((f) => [f.check, f.value, f.problem]), [['ipvs', 'absent', false]]);
    assert.match(ipvs[0]?.why ?? '', /not loaded.*Not an error/s);
  });

  it('warns about conn_reuse_mode=1 on kernels before 5.9 only', () => {
    assert.equal(byCheck(diagnose({ ...healthy, kernelRelease: '5.4.0-1' })).get('ipvs.conn_reuse_mode')?.problem, true);
    assert.equal(byCheck(diagnose({ ...healthy, kernelRelease: '5.10.0' })).get('ipvs.conn_reuse_mode')?.problem, false);
  });

  it('tells apart an unhealthy agent, unknown readings and uncounted stale entries', () => {
    const f = byCheck(diagnose({ ...healthy, agent: { url: 'u', health: { status: 503 }, serversHeld: undefined }, cpus: undefined, conntrackMax: undefined, stale: undefined, netfilter: {} }));
    assert.equal(f.get('agent')?.value, 'HTTP 503');
    assert.equal(f.get('agent')?.problem, true);
    assert.equal(f.get('conntrack.fill')?.value, null);
    assert.equal(f.get('conntrack.fill')?.problem, true);
    assert.equal(f.get('conntrack.drop')?.problem, false);
    assert.equal(f.get('conntrack.stale')?.problem, false);
    assert.match(f.get('conntrack.stale')?.why ?? '', /--endpoints/);
    assert.equal(f.get('sysctl.nf_conntrack_udp_timeout')?.value, null);
  });
});

describe('parsers', () => {
  it('reads per-CPU counters of /proc/net/stat/nf_conntrack by column name', () => {
    const text = 'entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n'
      + '0000000a  00000000 00000000 00000000 00000003 00000000 00000000 00000000 00000000 00000001 00000000 00000000 00000000  00000000 00000000 00000000 00000000\n'
      + '0000000a  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 000000ff 00000002 00000010 00000000  00000000 00000000 00000000 00000000\n';
    assert.deepEqual(parseConntrackStat(text), [
      { cpu: 0, insertFailed: 1, drop: 0, earlyDrop: 0 },
      { cpu: 1, insertFailed: 255, drop: 2, earlyDrop: 16 },
    ]);
    assert.equal(parseConntrackStat('nothing here\n1 2\n'), undefined);
  });

  it('sums a metric over its label sets and ignores longer names', () => {
    const text = '# HELP conndrain_ipvs_servers_held x\nconndrain_ipvs_servers_held{service="a"} 2\nconndrain_ipvs_servers_held{service="b"} 3\nconndrain_ipvs_servers_held_total 9\n';
    assert.equal(sumMetric(text, 'conndrain_ipvs_servers_held'), 5);
    assert.equal(sumMetric('conndrain_ipvs_available 0\n', 'conndrain_ipvs_available'), 0);
    assert.equal(sumMetric('', 'conndrain_ipvs_servers_held'), undefined);
  });
});
