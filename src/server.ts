import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { closeContext, createContext, type AppContext } from './context.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  address: string;
  close(): Promise<void>;
}

/** Builds and listens; SIGTERM/SIGINT stop accepting, finish in-flight requests, then close the database. */
export async function startServer(config: Config): Promise<RunningServer> {
  const ctx = await createContext(config);
  const app = await buildApp(ctx);
  const address = await app.listen({ port: config.port, host: config.host });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await closeContext(ctx);
    })());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down');
      close().then(
        () => process.exit(0),
        (err) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return { app, ctx, address, close };
}
