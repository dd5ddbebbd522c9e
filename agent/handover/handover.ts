/**
 * The handover runnable (docs/handover.md): listens on this instance's handover socket (a
 * newer agent on the node connects and takes the state file over), and follows the older
 * instances the state file names: their open sessions are kept as foreign, continued here
 * when they say bye, reported interrupted when they die without one.
 */
import type { Logger } from 'pino';
import type { HeldServer } from '../ipvs/ipvs-hold.js';
import type { Runnable } from '../runnable.js';
import type { ForeignSessions } from './foreign-sessions.js';
import { followInstance, HandoverListener, type FollowLink } from './handover-link.js';
import type { AgentState, SessionRecord, StateOwner } from '../runtime/state-file.js';

/** The drain sessions of this instance, as the handover needs them (the drain runnable). */
export interface HandedSessions {
  has(drainId: string): boolean;
  openRecords(holder: string, handedOver: boolean): SessionRecord[];
  /** Continues a session another instance began; `interrupted`: a crash cut its call short. */
  resume(record: SessionRecord, interrupted: boolean): void;
}

/**
 * IPVS has one editor at a time while two instances overlap (the IPVS runnable; docs/handover.md):
 * a newer instance waits for the older ones' holds, an older one yields to a newer one.
 */
export interface IpvsEditor {
  readonly owns: boolean;
  list(): HeldServer[];
  expect(holder: string): void;
  asked(holder: string): void;
  settled(holder: string): void;
  adopt(holder: string, held: HeldServer[]): void;
  yieldTo(to: string): Promise<HeldServer[]>;
  /** Edits IPVS again, with the holds the newer instance that went away left in the state file. */
  reclaim(stored: HeldServer[] | undefined): void;
  release(): void;
}

export interface HandoverOptions {
  owner: StateOwner;
  logger: Logger;
  /** The agent stops: a followed instance that goes away hands nothing to this one any more. */
  stopping: () => boolean;
  foreign: ForeignSessions;
  sessions: HandedSessions;
  ipvs: IpvsEditor;
  /**
   * The state file as loaded at start, its writer (a followed instance's sessions changed), and
   * the holds in it now (a newer instance that went away wrote them).
   */
  state: { readonly loaded: AgentState | undefined; save(): Promise<void>; storedHolds(): Promise<HeldServer[] | undefined> };
  /** A newer instance connected and owns the state file now (`by`), or went away (undefined). */
  superseded: (by: StateOwner | undefined) => void;
}

export class Handover implements Runnable {
  readonly name = 'handover';
  private readonly listener: HandoverListener;
  /** Older instances followed over their handover socket. */
  private readonly following: FollowLink[] = [];

  constructor(private readonly options: HandoverOptions) {
    const { owner, logger: log, sessions, ipvs } = options;
    this.listener = new HandoverListener(owner, log, () => sessions.openRecords(owner.instance, false), (by) => {
      if (by === undefined) log.info('handover: the newer agent instance went away; this one owns the state file again');
      options.superseded(by);
      if (by === undefined) void this.reclaimIpvs();
    }, (to) => ipvs.yieldTo(to));
  }

  async start(): Promise<void> {
    await this.listener.listen().catch((error: unknown) => this.options.logger.warn({ err: error }, 'handover socket: could not listen; a newer agent will not see this one\'s sessions'));
    this.followOlder(this.options.state.loaded);
  }

  /** The first pod list is in: asks every older instance followed to hand IPVS over. */
  takeIpvs(): void {
    for (const f of this.following) f.take();
  }

  /** Sends this instance's open sessions to every connected newer instance. */
  publish(): void {
    this.listener.publish();
  }

  /** Tells the newer instances which sessions it leaves them (bye), or just closes. */
  async stop(): Promise<void> {
    const { owner, sessions, ipvs } = this.options;
    const left = sessions.openRecords(owner.instance, true);
    // The holds go with the sessions, unless a newer instance took them already (they may be stale since).
    if (this.listener.connected > 0) await this.listener.bye(left, ipvs.owns ? ipvs.list() : []);
    else this.listener.close();
    for (const f of this.following) f.close();
    ipvs.release();
  }

  /** The newer instance went away: IPVS is edited here again, from the holds it wrote to the state file. */
  private async reclaimIpvs(): Promise<void> {
    const { stopping, state, ipvs } = this.options;
    if (stopping()) return;
    ipvs.reclaim(await state.storedHolds());
  }

  /**
   * The sessions of the state file: those handed over are continued here; those of another
   * instance are followed over its handover socket (it answers them, or leaves them with `bye`,
   * or dies: then they were cut short). The file's owner is followed too, so it stops writing.
   */
  private followOlder(state: AgentState | undefined): void {
    if (state === undefined) return;
    const { owner, logger: log, stopping, foreign, sessions, ipvs } = this.options;
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
      ipvs.expect(holder);
      const link = followInstance(holder, owner, log, {
        holds: (held) => ipvs.adopt(holder, held),
        sessions: (list) => {
          foreign.dropHolder(holder);
          for (const r of list) if (!sessions.has(r.drainId)) foreign.set({ ...r, holder });
          void this.options.state.save();
        },
        bye: (list, held) => {
          ipvs.adopt(holder, held);
          foreign.dropHolder(holder);
          log.info({ from: holder, sessions: list.length }, 'handover: the older agent exited gracefully; continuing the drains it left');
          for (const r of list) sessions.resume({ ...r, holder }, false);
        },
        lost: () => {
          ipvs.settled(holder);
          if (stopping()) return;
          const cut = foreign.dropHolder(holder);
          if (cut.length > 0) log.warn({ from: holder, sessions: cut.length }, 'handover: the agent instance that held these drain calls is gone without handing them over (crash or kill): drains interrupted');
          for (const r of cut) sessions.resume(r, true);
        },
      });
      this.following.push({
        take: () => {
          link.take();
          ipvs.asked(holder);
        },
        close: () => link.close(),
      });
    }
  }
}
