import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection accepted before the listening socket closed may take to send its first request, and
 * an ended one to be closed by its client, before it is destroyed: the bound on a drain beyond the requests.
 */
export const GRACE_MS = 2_000;
const POLL_MS = 25;

interface Tracked {
  acceptedAt: number;
  /** Requests received on this connection so far. */
  requests: number;
  /** Requests received and not yet answered. */
  inFlight: number;
  /** When the drain ended it (sent FIN), if it did. */
  endedAt?: number;
}

/**
 * The open connections of a server, known from the moment each is accepted, for a drain that cuts no request.
 * Node's `closeIdleConnections()` (also run by `http.Server.close()`) destroys every connection with no request
 * in progress, and that includes one just accepted whose request is still unread in the socket: its client,
 * which sent the request, sees a reset. Here a connection is ended (FIN, after what is being written) only
 * between requests, once it carried one: an idle keep-alive connection, whose client may reuse it at that very
 * moment, the usual keep-alive race that clients retry. One that sent nothing within GRACE_MS of being
 * accepted, or stays open GRACE_MS after being ended, is destroyed.
 */
export class ConnectionDrain {
  private readonly open = new Map<Socket, Tracked>();

  constructor(server: HttpServer) {
    server.on('connection', (socket: Socket) => {
      this.open.set(socket, { acceptedAt: Date.now(), requests: 0, inFlight: 0 });
      socket.once('close', () => this.open.delete(socket));
    });
    server.on('request', (request, response) => {
      const tracked = this.open.get(request.socket);
      if (!tracked) return;
      tracked.requests++;
      tracked.inFlight++;
      response.once('close', () => tracked.inFlight--);
    });
  }

  /**
   * Resolves once no connection is left. Responses must carry `Connection: close` meanwhile (the caller's
   * hook), so each connection ends after its current or next request.
   */
  async finish(): Promise<void> {
    while (this.open.size > 0) {
      const now = Date.now();
      for (const [socket, tracked] of this.open) {
        if (tracked.endedAt === undefined && tracked.requests > 0 && tracked.inFlight === 0) {
          tracked.endedAt = now;
          socket.end();
        }
        const overdue = tracked.endedAt ?? (tracked.requests === 0 ? tracked.acceptedAt : undefined);
        if (overdue !== undefined && now - overdue > GRACE_MS) socket.destroy();
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
