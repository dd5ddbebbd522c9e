/**
 * The agent's state on the node (a hostPath file): every pod's drain record and every IPVS
 * real server it holds, so an agent restart mid-drain resumes every hold and loses none.
 * Written atomically: a temp file in the same directory, fsync, rename over the old file,
 * fsync the directory. A file that does not parse is kept aside (`.corrupt-<time>`) and the
 * agent starts empty, saying so (it then re-finds draining pods' servers from IPVS itself).
 *
 * Version 2 adds the open drain sessions (hook kind `agent`) and the writing instance
 * (`owner`): during a handover two agents run on the node; the newer one owns the file and
 * the older one stops writing it (docs/handover.md). Version 1 files are read (no sessions).
 */
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import type { PodRecord } from '../../src/drain-plan.js';
import { DRAIN_STATES } from '../../src/contract.js';
import { isObject as isRecord } from '../../src/inject/json.js';
import type { HeldServer } from '../ipvs/ipvs-hold.js';

export const STATE_VERSION = 2;

/** The agent instance that wrote the file (its handover socket is named after `instance`). */
export interface StateOwner {
  instance: string;
  startedAtMs: number;
}

/** An open drain session (a preStop call held by `holder`), as the state file keeps it. */
export interface SessionRecord {
  drainId: string;
  uid: string;
  key: string;
  nodeName: string | undefined;
  ips: string[];
  startedAtMs: number;
  minDrainMs: number;
  drainMs: number;
  /** DrainStarted was posted for it (a resumed session posts no second one). */
  startedPosted: boolean;
  /** The instance holding it. */
  holder: string;
  /** The holder exited gracefully and left it to the next agent (not interrupted). */
  handedOver: boolean;
  /**
   * An agent crash cut its preStop call short and the DrainInterrupted Event saying so is not
   * recorded yet (the API was down): the next instance posts it, even after a handover.
   */
  interruptedUnposted?: true;
  /**
   * The drain itself ended (its pod went, say) while that Event was still unposted: the record is
   * kept only to post it, and the next instance continues no drain for it. On disk and on the
   * handover link these records go in a list of their own (`endedUnposted`, see `splitEnded`).
   */
  ended?: true;
}

/**
 * Sessions as the state file and the handover link carry them: the ended ones (kept only for
 * their DrainInterrupted) apart from `sessions`. An agent older than that list reads `sessions`
 * only and would resume an ended record there as a running drain (a rollback, or a handover to
 * an older version); it ignores a field it does not know, so it posts no Event and continues
 * nothing.
 */
export interface SessionLists {
  sessions: SessionRecord[];
  endedUnposted?: SessionRecord[];
}

/** `records` as `SessionLists` (`endedUnposted` only when there is one). */
export function splitEnded(records: readonly SessionRecord[]): SessionLists {
  const sessions: SessionRecord[] = [];
  const ended: SessionRecord[] = [];
  for (const r of records) {
    if (r.ended === true) {
      const { ended: _, ...rest } = r;
      ended.push(rest);
    } else sessions.push(r);
  }
  return ended.length === 0 ? { sessions } : { sessions, endedUnposted: ended };
}

/** The records `splitEnded` split (`ended` set again); `endedUnposted` not a list counts as none. */
export function joinEnded(sessions: readonly SessionRecord[], endedUnposted: unknown): SessionRecord[] {
  const ended = Array.isArray(endedUnposted) ? endedUnposted.filter(validSession) : [];
  return [...sessions, ...ended.map((r) => ({ ...r, ended: true as const }))];
}

export interface AgentState {
  version: typeof STATE_VERSION;
  writtenAt: string;
  owner?: StateOwner;
  pods: PodRecord[];
  holds: HeldServer[];
  sessions: SessionRecord[];
}

export type LoadedState = { kind: 'missing' } | { kind: 'loaded'; state: AgentState } | { kind: 'corrupt'; reason: string; movedTo: string | undefined };

function validPod(p: unknown): p is PodRecord {
  return isRecord(p) && typeof p.uid === 'string' && typeof p.key === 'string' && Array.isArray(p.ips)
    && typeof p.state === 'string' && (DRAIN_STATES as readonly string[]).includes(p.state) && typeof p.sinceMs === 'number';
}

/** A held IPVS server as the state file and the handover link carry it. */
export function validHold(h: unknown): h is HeldServer {
  return isRecord(h) && typeof h.podUid === 'string' && isRecord(h.service) && isRecord(h.destination)
    && typeof h.originalWeight === 'number' && typeof h.recreated === 'boolean'
    && (h.originalAssumed === undefined || typeof h.originalAssumed === 'boolean')
    && (h.elsewhere === undefined || h.elsewhere === true);
}

function validSession(s: unknown): s is SessionRecord {
  return isRecord(s) && typeof s.drainId === 'string' && typeof s.uid === 'string' && typeof s.key === 'string'
    && (s.nodeName === undefined || typeof s.nodeName === 'string') && Array.isArray(s.ips) && s.ips.every((ip) => typeof ip === 'string')
    && typeof s.startedAtMs === 'number' && typeof s.minDrainMs === 'number' && typeof s.drainMs === 'number'
    && typeof s.startedPosted === 'boolean' && typeof s.holder === 'string' && typeof s.handedOver === 'boolean'
    && (s.interruptedUnposted === undefined || s.interruptedUnposted === true)
    && (s.ended === undefined || s.ended === true);
}

function validOwner(o: unknown): o is StateOwner {
  return isRecord(o) && typeof o.instance === 'string' && typeof o.startedAtMs === 'number';
}

/** Reads versions 1 (holds and records only) and 2 (plus sessions and owner). */
export function parseState(text: string): AgentState {
  const raw: unknown = JSON.parse(text);
  if (!isRecord(raw) || (raw.version !== 1 && raw.version !== STATE_VERSION)) throw new Error(`not a version 1 or ${STATE_VERSION} conndrain state file`);
  if (!Array.isArray(raw.pods) || !raw.pods.every(validPod)) throw new Error('"pods" is not a list of drain records');
  if (!Array.isArray(raw.holds) || !raw.holds.every(validHold)) throw new Error('"holds" is not a list of held IPVS servers');
  const sessions: unknown = raw.version === 1 ? [] : raw.sessions;
  if (!Array.isArray(sessions) || !sessions.every(validSession)) throw new Error('"sessions" is not a list of drain sessions');
  if (raw.endedUnposted !== undefined && (!Array.isArray(raw.endedUnposted) || !raw.endedUnposted.every(validSession))) throw new Error('"endedUnposted" is not a list of drain sessions');
  if (raw.owner !== undefined && !validOwner(raw.owner)) throw new Error('"owner" is not an agent instance');
  return { version: STATE_VERSION, writtenAt: String(raw.writtenAt), ...(raw.owner === undefined ? {} : { owner: raw.owner }), pods: raw.pods, holds: raw.holds, sessions: joinEnded(sessions, raw.endedUnposted) };
}

export async function loadState(path: string, nowMs: number): Promise<LoadedState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'corrupt', reason: (error as Error).message, movedTo: undefined };
  }
  try {
    return { kind: 'loaded', state: parseState(text) };
  } catch (error) {
    const movedTo = `${path}.corrupt-${nowMs}`;
    try {
      await rename(path, movedTo);
      return { kind: 'corrupt', reason: (error as Error).message, movedTo };
    } catch {
      return { kind: 'corrupt', reason: (error as Error).message, movedTo: undefined };
    }
  }
}

/** Writes `state` to `path` atomically (temp + fsync + rename + directory fsync). */
export async function writeStateAtomic(path: string, state: AgentState): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  const file = await open(temp, 'w', 0o600);
  try {
    const { sessions, ...rest } = state;
    await file.writeFile(`${JSON.stringify({ ...rest, ...splitEnded(sessions) })}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  const dirHandle = await open(dir, 'r');
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

/** Back-to-back writes start at least this far apart (see StateWriter). */
export const STATE_WRITE_GAP_MS = 250;

/**
 * Coalesces writes: `save()` returns once a write that started after the call has finished,
 * so callers awaiting it know their change is on disk; bursts become one write. Writes start
 * at least `minGapMs` apart: during a rollout the state changes with nearly every watch event,
 * and writing back to back (serialize, write, fsync, rename, directory fsync) was the agent's
 * largest CPU cost in bench/scale (docs/scale.md, "Then the state file"). A first change
 * after a quiet period is written at once; the changes of the next `minGapMs` go in one write.
 */
export class StateWriter {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;
  private lastStartMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => AgentState,
    private readonly onError: (error: unknown) => void,
    private readonly minGapMs = STATE_WRITE_GAP_MS,
  ) {}

  save(): Promise<void> {
    if (this.next !== undefined) return this.next;
    const previous = this.running ?? Promise.resolve();
    const run = previous.then(async () => {
      const wait = this.lastStartMs + this.minGapMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.next = undefined;
      this.running = run;
      this.lastStartMs = performance.now();
      try {
        await writeStateAtomic(this.path, this.snapshot());
      } catch (error) {
        this.onError(error);
      } finally {
        if (this.running === run) this.running = undefined;
      }
    });
    this.next = run;
    return run;
  }
}
