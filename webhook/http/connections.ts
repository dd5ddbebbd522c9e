import type { Socket } from 'node:net';

/**
 * Every TCP socket the server accepted, from the `connection` event (before TLS) until it
 * closes. `closeAllConnections()` only knows sockets that finished their TLS handshake and
 * became HTTP connections; a socket still in its handshake would keep `server.close()`
 * waiting for Node's 120 s handshake timeout. This set is what shutdown destroys at its deadline.
 */
export class ConnectionTracker {
  private readonly sockets = new Set<Socket>();

  add(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  get size(): number {
    return this.sockets.size;
  }

  /** Destroys every socket still open; returns how many there were. */
  destroyAll(): number {
    const count = this.sockets.size;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    return count;
  }
}
