/**
 * The agent's state on the node (a hostPath file): every pod's drain record and every IPVS
 * real server it holds, so an agent restart mid-drain resumes every hold and loses none.
 * Written atomically: a temp file in the same directory, fsync, rename over the old file,
 * fsync the directory. A file that does not parse is kept aside (`.corrupt-<time>`) and the
 * agent starts empty, saying so (it then re-finds draining pods' servers from IPVS itself).
 */
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import type { PodRecord } from '../src/drain-plan.js';
import { DRAIN_STATES } from '../src/contract.js';
import type { HeldServer } from './ipvs-hold.js';

export const STATE_VERSION = 1;

export interface AgentState {
  version: typeof STATE_VERSION;
  writtenAt: string;
  pods: PodRecord[];
  holds: HeldServer[];
}

export type LoadedState = { kind: 'missing' } | { kind: 'loaded'; state: AgentState } | { kind: 'corrupt'; reason: string; movedTo: string | undefined };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validPod(p: unknown): p is PodRecord {
  return isRecord(p) && typeof p.uid === 'string' && typeof p.key === 'string' && Array.isArray(p.ips)
    && typeof p.state === 'string' && (DRAIN_STATES as readonly string[]).includes(p.state) && typeof p.sinceMs === 'number';
}

function validHold(h: unknown): h is HeldServer {
  return isRecord(h) && typeof h.podUid === 'string' && isRecord(h.service) && isRecord(h.destination)
    && typeof h.originalWeight === 'number' && typeof h.recreated === 'boolean';
}

export function parseState(text: string): AgentState {
  const raw: unknown = JSON.parse(text);
  if (!isRecord(raw) || raw.version !== STATE_VERSION) throw new Error(`not a version ${STATE_VERSION} conndrain state file`);
  if (!Array.isArray(raw.pods) || !raw.pods.every(validPod)) throw new Error('"pods" is not a list of drain records');
  if (!Array.isArray(raw.holds) || !raw.holds.every(validHold)) throw new Error('"holds" is not a list of held IPVS servers');
  return { version: STATE_VERSION, writtenAt: String(raw.writtenAt), pods: raw.pods, holds: raw.holds };
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
    await file.writeFile(`${JSON.stringify(state)}\n`);
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

/**
 * Coalesces writes: `save()` returns once a write that started after the call has finished,
 * so callers awaiting it know their change is on disk; bursts become one write.
 */
export class StateWriter {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => AgentState,
    private readonly onError: (error: unknown) => void,
  ) {}

  save(): Promise<void> {
    if (this.next !== undefined) return this.next;
    const previous = this.running ?? Promise.resolve();
    const run = previous.then(async () => {
      this.next = undefined;
      this.running = run;
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
