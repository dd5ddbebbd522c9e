/**
 * The handover link's wire format across versions: a finished drain kept only for its unposted
 * DrainInterrupted travels apart from the running ones, so an older agent (a rollback) that
 * reads `sessions` alone never takes it for a drain to continue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { pino } from 'pino';
import type { SessionRecord } from '../runtime/state-file.js';
import { followInstance, HandoverListener, handoverSocketName } from './handover-link.js';

const log = pino({ level: 'silent' });
const running: SessionRecord = { drainId: 'd-run', uid: 'u1', key: 'shop/a', nodeName: 'n1', ips: ['10.0.0.1'], startedAtMs: 1, minDrainMs: 1000, drainMs: 30_000, startedPosted: true, holder: 'old', handedOver: false };
const ended: SessionRecord = { ...running, drainId: 'd-ended', uid: 'u2', key: 'shop/b', ips: ['10.0.0.2'], interruptedUnposted: true, ended: true };

/** The first line an older agent (which reads `sessions` only) gets after its hello. */
async function firstLineAsOlderAgent(instance: string): Promise<Record<string, unknown>> {
  const socket = connect(handoverSocketName(instance));
  try {
    return await new Promise((resolve, reject) => {
      let text = '';
      socket.on('error', reject);
      socket.on('connect', () => socket.write(`${JSON.stringify({ type: 'hello', instance: 'older-version', startedAtMs: 2 })}\n`));
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        const at = text.indexOf('\n');
        if (at >= 0) resolve(JSON.parse(text.slice(0, at)) as Record<string, unknown>);
      });
    });
  } finally {
    socket.destroy();
  }
}

test('handover link: an ended session goes in endedUnposted, never in sessions; a newer agent gets both back as they were', async () => {
  const instance = `link-test-${process.pid}`;
  const listener = new HandoverListener({ instance, startedAtMs: 1 }, log, () => [running, ended], () => undefined);
  await listener.listen();
  try {
    const line = await firstLineAsOlderAgent(instance);
    assert.deepEqual((line.sessions as SessionRecord[]).map((s) => s.drainId), ['d-run'], 'an older agent sees only the running drain');
    assert.deepEqual((line.endedUnposted as SessionRecord[]).map((s) => s.drainId), ['d-ended']);
    assert.equal((line.endedUnposted as SessionRecord[])[0]?.ended, undefined, 'the list says it, not a field an older agent would misread');

    const got = await new Promise<{ sessions: SessionRecord[]; bye?: SessionRecord[] }>((resolve) => {
      const seen: { sessions: SessionRecord[]; bye?: SessionRecord[] } = { sessions: [] };
      const link = followInstance(instance, { instance: 'newer', startedAtMs: 3 }, log, {
        sessions: (list) => {
          seen.sessions = list;
          void listener.bye([running, ended]);
        },
        holds: () => undefined,
        bye: (list) => {
          seen.bye = list;
          link.close();
          resolve(seen);
        },
        lost: () => resolve(seen),
      });
    });
    assert.deepEqual(got.sessions, [running, ended], 'sessions message');
    assert.deepEqual(got.bye, [running, ended], 'bye message');
  } finally {
    listener.close();
  }
});
