import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { closeContext, createContext, type AppContext, type ContextOverrides } from './context.js';
import { startReminderScheduler } from './modules/objects/reminders.service.js';

/** How often the in-process scheduler looks for due reminders. */
const REMINDER_INTERVAL_MS = 30_000;

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  address: string;
  close(): Promise<void>;
}

/** Builds and listens; SIGTERM/SIGINT stop accepting, finish in-flight requests, then close the database. */
export async function startServer(config: Config, overrides: ContextOverrides = {}): Promise<RunningServer> {
  const ctx = await createContext(config, overrides);
  const app = await buildApp(ctx);
  const address = await app.listen({ port: config.port, host: config.host });
  const reminders =
    ctx.config.dispatcher === 'inline'
      ? startReminderScheduler(ctx, { intervalMs: REMINDER_INTERVAL_MS, onError: (err) => app.log.error({ err }, 'reminder tick failed') })
      : undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await reminders?.stop();
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
