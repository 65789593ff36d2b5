import { connect, type Socket } from 'node:net';

/** A raw TCP client: what a slow, idle or oversized client really sends, byte by byte, with timings. */
export interface RawClient {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves with the milliseconds from connect to the server closing the connection. */
  closed: Promise<number>;
  /** Resolves once the received text matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  write(data: string | Buffer): boolean;
}

/**
 * `allowHalfOpen`: the client's side stays open after the server's FIN, as with a client that keeps sending its
 * request without reading (Node's sockets otherwise answer a FIN with their own).
 */
export function rawConnect(port: number, opts: { allowHalfOpen?: boolean } = {}): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: opts.allowHalfOpen ?? false });
    const start = Date.now();
    let text = '';
    const waiters: (() => void)[] = [];
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      for (const w of waiters.splice(0)) w();
    });
    const closed = new Promise<number>((r) => socket.on('close', () => {
      r(Date.now() - start);
      for (const w of waiters.splice(0)) w();
    }));
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => text,
        closed,
        write: (data) => (socket.destroyed ? false : socket.write(data)),
        waitFor(pattern, timeoutMs = 5_000) {
          return new Promise((res, rej) => {
            const timer = setTimeout(() => rej(new Error(`no ${pattern} within ${timeoutMs} ms; got ${JSON.stringify(text.slice(0, 200))}`)), timeoutMs);
            const check = () => {
              if (pattern.test(text)) {
                clearTimeout(timer);
                res(text);
              } else if (socket.destroyed) {
                clearTimeout(timer);
                rej(new Error(`closed without ${pattern}; got ${JSON.stringify(text.slice(0, 200))}`));
              } else waiters.push(check);
            };
            check();
          });
        },
      }),
    );
    socket.once('error', reject);
  });
}

/** Writes `chunks` one every `intervalMs` until the socket closes or they run out. */
export async function trickle(client: RawClient, chunks: Iterable<string>, intervalMs: number): Promise<void> {
  for (const chunk of chunks) {
    if (client.socket.destroyed) return;
    client.write(chunk);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
