import { pino } from 'pino';
import type { Config } from './config.js';
import { closeContext, createContext, type AppContext } from './context.js';
import { loggerOptions } from './http/logging.js';
import { startReminderScheduler } from './modules/objects/reminders.service.js';
import { startTrashPurger, TRASH_PURGE_INTERVAL_MS } from './modules/shared/trash-purge.service.js';
import { WebhookDispatcher } from './modules/webhooks/dispatcher.js';
import { listenForCommits } from './modules/webhooks/pg-wakeup.js';
import { startMetricsServer } from './observability/metrics-server.js';

export interface RunningWorker {
  ctx: AppContext;
  dispatcher: WebhookDispatcher;
  close(): Promise<void>;
}

/** How often the worker's scheduler looks for due reminders. */
const REMINDER_INTERVAL_MS = 30_000;

/**
 * `crm worker`: the webhook dispatcher and the reminder scheduler without the API, for scale-out next to API
 * instances started with DISPATCHER=off. Any number may run on one PostgreSQL database (deliveries and
 * reminders are claimed, never sent twice). SIGTERM lets in-flight attempts finish.
 */
export async function startWorker(config: Config): Promise<RunningWorker> {
  const log = pino(loggerOptions(config.logLevel)).child({ module: 'webhooks' });
  const ctx = await createContext(config);
  const dispatcher = new WebhookDispatcher(ctx, { logger: log }).start();
  const reminders = startReminderScheduler(ctx, { intervalMs: REMINDER_INTERVAL_MS, onError: (err) => log.error({ err }, 'reminder tick failed') });
  const purger = startTrashPurger(ctx, { intervalMs: TRASH_PURGE_INTERVAL_MS, onError: (err) => log.error({ err }, 'trash purge failed') });
  const listener = ctx.database.dialect === 'postgres' ? await listenForCommits(config.database.url, () => dispatcher.wake(), log) : undefined;
  const metrics =
    config.metricsPort !== undefined && config.metricsToken
      ? await startMetricsServer(ctx.metrics, { host: config.host, port: config.metricsPort, token: config.metricsToken })
      : undefined;
  log.info({ dialect: ctx.database.dialect }, 'webhook worker started (with the reminder scheduler and the trash purge)');
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await listener?.close();
      await metrics?.close();
      await reminders.stop();
      await purger.stop();
      await dispatcher.stop();
      await closeContext(ctx);
    })());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      log.info({ signal }, 'webhook worker stopping');
      close().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'webhook worker shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return { ctx, dispatcher, close };
}
