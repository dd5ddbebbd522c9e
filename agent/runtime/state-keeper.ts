/**
 * The state runnable: loads the state file at start (what was held and drained before a
 * restart) and writes it, coalesced and atomically, whenever a part says something changed.
 * A process that never finished starting never writes it (it may not have loaded it), one
 * superseded by a newer instance on the node leaves the file to that instance, and one that
 * stopped writes nothing after its last write (a part that changes something while the agent
 * stops, an Event recorded at the last moment, would otherwise write over what the next
 * instance may already own).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../time/clock.js';
import type { PodRecord } from '../../src/drain-plan.js';
import type { HeldServer } from '../ipvs/ipvs-hold.js';
import type { Runnable } from '../runnable.js';
import { loadState, StateWriter, STATE_VERSION, type AgentState, type SessionRecord, type StateOwner } from './state-file.js';

/** What the file keeps, read from the parts that own it. */
export interface StateSources {
  pods(): PodRecord[];
  holds(): HeldServer[];
  sessions(): SessionRecord[];
}

/** Where a loaded file's records go back to (the plan, the IPVS hold). */
export interface StateResume {
  pods(records: readonly PodRecord[]): void;
  holds(held: readonly HeldServer[]): void;
}

export interface StateKeeperOptions {
  stateFile: string;
  owner: StateOwner;
  clock: Clock;
  logger: Logger;
  /** A newer instance owns the file now (the handover says so): this one no longer writes it. */
  superseded: () => boolean;
  sources: StateSources;
  resume: StateResume;
}

export class StateKeeper implements Runnable {
  readonly name = 'state';
  /** The file as loaded at start (undefined: none, or unreadable). */
  loaded: AgentState | undefined;
  private readonly writer: StateWriter;
  /** Every part started: only then may this process write the file (it has loaded it). */
  private writable = false;
  /** The last write is done or under way: nothing more is written. */
  private stopped = false;

  constructor(private readonly options: StateKeeperOptions) {
    const { stateFile, logger } = options;
    this.writer = new StateWriter(stateFile, () => this.snapshot(), (error) => logger.error({ err: error, stateFile }, 'state file write failed; holds are still applied, retried on the next change'));
  }

  /** The drain records, held servers and open sessions, as the file keeps them. */
  snapshot(): AgentState {
    const { sources, clock, owner } = this.options;
    return { version: STATE_VERSION, writtenAt: new Date(clock.now()).toISOString(), owner, pods: sources.pods(), holds: sources.holds(), sessions: sources.sessions() };
  }

  async start(): Promise<void> {
    const { stateFile, clock, logger: log, resume } = this.options;
    const loaded = await loadState(stateFile, clock.now());
    if (loaded.kind === 'missing') {
      log.info({ stateFile }, 'no state file: starting empty');
      return;
    }
    if (loaded.kind === 'corrupt') {
      log.error({ stateFile, reason: loaded.reason, movedTo: loaded.movedTo }, 'state file unreadable: starting empty (draining pods are found again from the API and IPVS)');
      return;
    }
    resume.pods(loaded.state.pods);
    resume.holds(loaded.state.holds);
    this.loaded = loaded.state;
    log.info({ stateFile, pods: loaded.state.pods.length, holds: loaded.state.holds.length, sessions: loaded.state.sessions.length, owner: loaded.state.owner?.instance, writtenAt: loaded.state.writtenAt }, 'state file loaded: resuming holds');
  }

  /** The holds in the file now (written by a newer instance that went away again). */
  async storedHolds(): Promise<HeldServer[] | undefined> {
    const loaded = await loadState(this.options.stateFile, this.options.clock.now());
    return loaded.kind === 'loaded' ? loaded.state.holds : undefined;
  }

  /** Every part is up: writes may begin. */
  allowWrites(): void {
    this.writable = true;
  }

  /** Writes the file, unless this process never finished starting or a newer instance owns it. */
  save(): Promise<void> {
    if (!this.writable || this.stopped || this.options.superseded()) return Promise.resolve();
    return this.writer.save();
  }

  /** The last write: what is held stays in the file for the next agent. Later saves write nothing. */
  async stop(): Promise<void> {
    const last = this.save();
    this.stopped = true;
    await last;
  }
}
