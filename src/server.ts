import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { closeContext, createContext, type AppContext, type ContextOverrides } from './context.js';
import { startReminderScheduler } from './modules/objects/reminders.service.js';
import { WebhookDispatcher } from './modules/webhooks/dispatcher.js';
import { publishCommits } from './modules/webhooks/pg-wakeup.js';

/** How often the in-process scheduler looks for due reminders. */
const REMINDER_INTERVAL_MS = 30_000;

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  /** The in-process webhook dispatcher (DISPATCHER=inline, the default). */
  dispatcher: WebhookDispatcher | undefined;
  address: string;
  close(): Promise<void>;
}

/**
 * Builds and listens, with the webhook dispatcher and the reminder scheduler in-process unless
 * DISPATCHER=off (then `crm worker` runs them). SIGTERM/SIGINT stop accepting, finish in-flight requests,
 * let in-flight webhook attempts finish and record them, then close the database.
 */
export async function startServer(config: Config, overrides: ContextOverrides = {}): Promise<RunningServer> {
  const ctx = await createContext(config, overrides);
  const app = await buildApp(ctx);
  const address = await app.listen({ port: config.port, host: config.host });
  const log = app.log.child({ module: 'webhooks' });
  const inline = config.dispatcher === 'inline';
  const dispatcher = inline ? new WebhookDispatcher(ctx, { logger: log }).start() : undefined;
  const reminders = inline
    ? startReminderScheduler(ctx, { intervalMs: REMINDER_INTERVAL_MS, onError: (err) => app.log.error({ err }, 'reminder tick failed') })
    : undefined;
  // Without an in-process dispatcher, `crm worker` processes deliver: on PostgreSQL, wake them per commit.
  const unpublish = !dispatcher && ctx.database.dialect === 'postgres' ? publishCommits(ctx, log) : undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await reminders?.stop();
      await app.close();
      unpublish?.();
      await dispatcher?.stop();
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
  return { app, ctx, dispatcher, address, close };
}
