/**
 * The link between two agent instances on one node during a handover (docs/handover.md).
 * Every instance listens on an abstract unix socket named after its instance id (abstract
 * sockets belong to the network namespace: both hostNetwork agents see it; nothing touches the
 * filesystem). A newer instance connects to the older one it found in the state file and says
 * hello: the older one then stops writing the state file (the newer owns it) and sends its open
 * drain sessions now and on every change, and `bye` with the sessions it leaves behind when it
 * exits gracefully. A link that closes without `bye` means the older instance died (kill -9,
 * OOM): its open sessions were cut short. JSON lines, each bounded.
 *
 * IPVS has one editor at a time. Once its first pod list is in, the newer instance sends
 * `take`; the older one stops editing IPVS, lets its calls in flight finish, and answers
 * `holds` with every server it holds (original weights included). The newer one edits IPVS
 * only from then on (or once the older one is gone, or after a bounded wait). `bye` carries
 * the holds too, for a newer instance that had not taken over yet.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { HeldServer } from '../ipvs/ipvs-hold.js';
import type { SessionLists, SessionRecord, StateOwner } from '../runtime/state-file.js';
import { joinEnded, splitEnded, validHold } from '../runtime/index.js';

const MAX_LINE = 16 * 1024 * 1024;

type Message =
  | { type: 'hello'; instance: string; startedAtMs: number }
  | { type: 'take' }
  | { type: 'holds'; holds: HeldServer[] }
  | ({ type: 'sessions' } & SessionLists)
  | ({ type: 'bye'; holds?: HeldServer[] } & SessionLists);

/** The well-formed holds of a message (anything else in the list is dropped). */
function holdsOf(list: unknown): HeldServer[] {
  return Array.isArray(list) ? list.filter(validHold) : [];
}

export function handoverSocketName(instance: string): string {
  return `\0conndrain-agent/${instance}`;
}

function readLines(socket: Socket, log: Logger, onMessage: (m: Message) => void): void {
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    if (buffer.length > MAX_LINE) {
      log.warn({ bytes: buffer.length }, 'handover link: message too long; closing the link');
      socket.destroy();
      return;
    }
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      try {
        onMessage(JSON.parse(line) as Message);
      } catch (error) {
        log.warn({ err: error }, 'handover link: unreadable message (ignored)');
      }
    }
  });
}

function send(socket: Socket, message: Message): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}

/** This instance's end: newer instances connect to it. */
export class HandoverListener {
  private readonly server: Server;
  private readonly peers = new Set<Socket>();
  private closing = false;

  constructor(
    private readonly self: StateOwner,
    private readonly log: Logger,
    private readonly openSessions: () => SessionRecord[],
    /** A newer instance said hello: it owns the state file from now on (undefined: it went away again). */
    private readonly superseded: (by: StateOwner | undefined) => void,
    /** A newer instance takes IPVS over: stop editing it; resolves to the servers held, once calls in flight are done. */
    private readonly yieldIpvs: (to: string) => Promise<HeldServer[]> = () => Promise.resolve([]),
  ) {
    this.server = createServer((socket) => this.accept(socket));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(handoverSocketName(this.self.instance), () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Sends the open sessions to every connected newer instance. */
  publish(): void {
    if (this.peers.size === 0) return;
    const sessions = this.openSessions();
    for (const peer of this.peers) send(peer, { type: 'sessions', ...splitEnded(sessions) });
  }

  get connected(): number {
    return this.peers.size;
  }

  /** Graceful exit: tells every peer which sessions and IPVS holds it leaves to them, then closes. */
  async bye(sessions: SessionRecord[], holds: HeldServer[] = []): Promise<void> {
    this.closing = true;
    await Promise.all([...this.peers].map((peer) => new Promise<void>((resolve) => {
      peer.end(`${JSON.stringify({ type: 'bye', ...splitEnded(sessions), holds } satisfies Message)}\n`, () => resolve());
    })));
    this.close();
  }

  close(): void {
    this.closing = true;
    for (const peer of this.peers) peer.destroy();
    this.server.close();
  }

  private accept(socket: Socket): void {
    socket.on('error', () => undefined);
    let peer: string | undefined;
    readLines(socket, this.log, (m) => {
      if (m.type === 'take' && peer !== undefined) {
        const to = peer;
        this.log.info({ peer: to }, 'handover: the newer agent instance takes IPVS over; this one stops editing it');
        void this.yieldIpvs(to).then((holds) => send(socket, { type: 'holds', holds }), (error: unknown) => {
          this.log.warn({ err: error }, 'handover: could not hand the IPVS holds over');
        });
        return;
      }
      if (m.type !== 'hello' || typeof m.instance !== 'string' || typeof m.startedAtMs !== 'number' || peer !== undefined) return;
      peer = m.instance;
      this.peers.add(socket);
      socket.once('close', () => {
        this.peers.delete(socket);
        // The newer instance died or failed to start before this one exits: own the file again.
        if (this.peers.size === 0 && !this.closing) this.superseded(undefined);
      });
      this.log.info({ peer: m.instance }, 'handover: a newer agent instance connected; it owns the state file now');
      this.superseded({ instance: m.instance, startedAtMs: m.startedAtMs });
      send(socket, { type: 'sessions', ...splitEnded(this.openSessions()) });
    });
  }
}

export interface FollowHandlers {
  /** The older instance's open sessions (sent on connect and on every change). */
  sessions(list: SessionRecord[]): void;
  /** Its IPVS holds, in answer to `take`: it no longer edits IPVS. */
  holds(list: HeldServer[]): void;
  /** It exited gracefully and left these sessions and holds. */
  bye(list: SessionRecord[], holds: HeldServer[]): void;
  /** It is gone without a bye (or was never there): its sessions were cut short. */
  lost(): void;
}

export interface FollowLink {
  /** Asks the older instance for IPVS (sent once connected): it answers with its holds. */
  take(): void;
  close(): void;
}

/** Connects to the older instance `instance` (named in the state file) and follows it until it exits. */
export function followInstance(instance: string, self: StateOwner, log: Logger, handlers: FollowHandlers): FollowLink {
  const socket = connect(handoverSocketName(instance));
  let said = false;
  let closing = false;
  let connected = false;
  let taking = false;
  socket.on('connect', () => {
    connected = true;
    send(socket, { type: 'hello', instance: self.instance, startedAtMs: self.startedAtMs });
    if (taking) send(socket, { type: 'take' });
  });
  readLines(socket, log, (m) => {
    if (m.type === 'holds') {
      handlers.holds(holdsOf(m.holds));
      return;
    }
    if ((m.type !== 'sessions' && m.type !== 'bye') || !Array.isArray(m.sessions)) return;
    if (m.type === 'bye') {
      said = true;
      handlers.bye(joinEnded(m.sessions, m.endedUnposted), holdsOf(m.holds));
    } else handlers.sessions(joinEnded(m.sessions, m.endedUnposted));
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    if (!said && !closing) handlers.lost();
  });
  return {
    take: () => {
      if (taking) return;
      taking = true;
      if (connected) send(socket, { type: 'take' });
    },
    close: () => {
      closing = true;
      socket.destroy();
    },
  };
}
