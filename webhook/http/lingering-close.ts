import type { Socket } from 'node:net';

/**
 * Makes the next `Connection: close` answer on this socket close in stages: the answer is
 * written, the write side ended, input still arriving is read and dropped for `lingerMs`,
 * then the socket is destroyed (sooner if the client closes first).
 *
 * Node's server ends a `Connection: close` response with `socket.destroySoon()`, which
 * destroys the socket as soon as the answer is flushed. A client still uploading the body we
 * refused then gets a TCP reset, and a reset makes its kernel discard the answer it had not
 * read yet: the 413 is lost. This replaces destroySoon on this one socket (Go's net/http does
 * the same with closeWriteAndWait).
 */
export function lingerOnClose(socket: Socket, lingerMs: number): void {
  socket.destroySoon = (): void => {
    if (socket.destroyed) return;
    socket.end();
    // Keep reading so the client's sends are acknowledged instead of reset; the data is dropped.
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
