import { pino } from 'pino';
import type { Config } from './config.js';
import { closeContext, createContext, type AppContext } from './context.js';
import { loggerOptions } from './http/logging.js';
import { WebhookDispatcher } from './modules/webhooks/dispatcher.js';
import { listenForCommits } from './modules/webhooks/pg-wakeup.js';

export interface RunningWorker {
  ctx: AppContext;
  dispatcher: WebhookDispatcher;
  close(): Promise<void>;
}

/**
 * `crm worker`: the webhook dispatcher alone, for scale-out next to API instances started with
 * DISPATCHER=off. Any number may run on one PostgreSQL database. SIGTERM lets in-flight attempts finish.
 */
export async function startWorker(config: Config): Promise<RunningWorker> {
  const log = pino(loggerOptions(config.logLevel)).child({ module: 'webhooks' });
  const ctx = await createContext(config);
  const dispatcher = new WebhookDispatcher(ctx, { logger: log }).start();
  const listener = ctx.database.dialect === 'postgres' ? await listenForCommits(config.database.url, () => dispatcher.wake(), log) : undefined;
  log.info({ dialect: ctx.database.dialect }, 'webhook worker started');
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await listener?.close();
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
