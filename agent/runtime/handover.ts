/**
 * The handover runnable (docs/handover.md): listens on this instance's handover socket (a
 * newer agent on the node connects and takes the state file over), and follows the older
 * instances the state file names: their open sessions are kept as foreign, continued here
 * when they say bye, reported interrupted when they die without one.
 */
import type { Logger } from 'pino';
import type { Runnable } from '../runnable.js';
import type { ForeignSessions } from './foreign-sessions.js';
import { followInstance, HandoverListener } from './handover-link.js';
import type { AgentPhase } from './phase.js';
import type { AgentState, SessionRecord, StateOwner } from './state-file.js';

/** The drain sessions of this instance, as the handover needs them (the drain runnable). */
export interface HandedSessions {
  has(drainId: string): boolean;
  openRecords(holder: string, handedOver: boolean): SessionRecord[];
  /** Continues a session another instance began; `interrupted`: a crash cut its call short. */
  resume(record: SessionRecord, interrupted: boolean): void;
}

export interface HandoverOptions {
  owner: StateOwner;
  logger: Logger;
  phase: AgentPhase;
  foreign: ForeignSessions;
  sessions: HandedSessions;
  /** The state file as loaded at start, and its writer (a followed instance's sessions changed). */
  state: { readonly loaded: AgentState | undefined; save(): Promise<void> };
}

export class Handover implements Runnable {
  readonly name = 'handover';
  private readonly listener: HandoverListener;
  /** Older instances followed over their handover socket. */
  private readonly following: Array<{ close(): void }> = [];

  constructor(private readonly options: HandoverOptions) {
    const { owner, logger: log, phase, sessions } = options;
    this.listener = new HandoverListener(owner, log, () => sessions.openRecords(owner.instance, false), (by) => {
      if (by === undefined) log.info('handover: the newer agent instance went away; this one owns the state file again');
      phase.supersededBy = by;
    });
  }

  async start(): Promise<void> {
    await this.listener.listen().catch((error: unknown) => this.options.logger.warn({ err: error }, 'handover socket: could not listen; a newer agent will not see this one\'s sessions'));
    this.followOlder(this.options.state.loaded);
  }

  /** Sends this instance's open sessions to every connected newer instance. */
  publish(): void {
    this.listener.publish();
  }

  /** Tells the newer instances which sessions it leaves them (bye), or just closes. */
  async stop(): Promise<void> {
    const { owner, sessions } = this.options;
    const left = sessions.openRecords(owner.instance, true);
    if (this.listener.connected > 0) await this.listener.bye(left);
    else this.listener.close();
    for (const f of this.following) f.close();
  }

  /**
   * The sessions of the state file: those handed over are continued here; those of another
   * instance are followed over its handover socket (it answers them, or leaves them with `bye`,
   * or dies: then they were cut short). The file's owner is followed too, so it stops writing.
   */
  private followOlder(state: AgentState | undefined): void {
    if (state === undefined) return;
    const { owner, logger: log, phase, foreign, sessions } = this.options;
    const holders = new Set<string>();
    if (state.owner !== undefined) holders.add(state.owner.instance);
    for (const rec of state.sessions) {
      if (rec.handedOver) sessions.resume(rec, false);
      else {
        holders.add(rec.holder);
        foreign.set(rec);
      }
    }
    holders.delete(owner.instance);
    for (const holder of holders) {
      this.following.push(followInstance(holder, owner, log, {
        sessions: (list) => {
          foreign.dropHolder(holder);
          for (const r of list) if (!sessions.has(r.drainId)) foreign.set({ ...r, holder });
          void this.options.state.save();
        },
        bye: (list) => {
          foreign.dropHolder(holder);
          log.info({ from: holder, sessions: list.length }, 'handover: the older agent exited gracefully; continuing the drains it left');
          for (const r of list) sessions.resume({ ...r, holder }, false);
        },
        lost: () => {
          if (phase.stopping) return;
          const cut = foreign.dropHolder(holder);
          if (cut.length > 0) log.warn({ from: holder, sessions: cut.length }, 'handover: the agent instance that held these drain calls is gone without handing them over (crash or kill): drains interrupted');
          for (const r of cut) sessions.resume(r, true);
        },
      }));
    }
  }
}
