import { BatchItemError } from './modules/shared/batch.schemas.js';
import { batchBodyLimit } from './modules/shared/batch.routes.js';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import { registerAdmin } from './admin/index.js';
import type { AppContext } from './context.js';
import { registerAuth } from './http/auth.js';
import { registerBodyLimits } from './http/body-limits.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { registerEntityTags } from './http/entity-tags.js';
import { registerHealthRoutes } from './http/health.routes.js';
import { registerStrictJsonParser, registerTextGuard } from './http/input-hygiene.js';
import { registerMetrics } from './http/metrics.routes.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { boundServer, registerHostCheck, transportOptions } from './http/transport.js';
import { createLoggers, lazyChildLogger, requestId } from './http/logging.js';
import { API_PREFIX, registerOpenApi } from './http/openapi.js';
import { refuseUndeclaredQuery } from './http/undeclared-query.js';
import { createValidatorCompiler } from './http/validation.js';
import { Pagination } from './lib/pagination.js';
import { Account } from './modules/accounts/accounts.schemas.js';
import { registerAccountRoutes } from './modules/accounts/accounts.routes.js';
import { Deal } from './modules/deals/deals.schemas.js';
import { registerDealRoutes } from './modules/deals/deals.routes.js';
import { registerFeedRoutes, WebhookEventSchema } from './modules/events/feed.routes.js';
import { DealStage } from './modules/deals/stages.schemas.js';
import { Lead } from './modules/leads/leads.schemas.js';
import { registerLeadRoutes } from './modules/leads/leads.routes.js';
import { registerCustomFieldChecks } from './modules/fields/custom-fields.service.js';
import { registerMcpRoutes } from './modules/mcp/mcp.routes.js';
import { Note } from './modules/notes/notes.schemas.js';
import { registerNoteRoutes } from './modules/notes/notes.routes.js';
import { Task } from './modules/tasks/tasks.schemas.js';
import { registerTaskRoutes } from './modules/tasks/tasks.routes.js';
import { registerTimelineRoutes } from './modules/timeline/timeline.routes.js';
import { MinimalView, registerMinimalViews } from './modules/shared/minimal-view.js';
import { registerMeRoutes } from './modules/orgs/me.routes.js';
import { registerUserRoutes } from './modules/orgs/users.routes.js';
import { User } from './modules/orgs/users.schemas.js';
import { CustomObject } from './modules/objects/objects.schemas.js';
import { OPENAPI_DOCUMENT_CONFIG, openApiDocumentHandler } from './modules/objects/objects.openapi.js';
import { webhooksSection, WEBHOOK_EVENT_SCHEMA } from './modules/events/events.openapi.js';
import { registerObjectRoutes } from './modules/objects/objects.routes.js';
import { ObjectRecord } from './modules/objects/records.schemas.js';
import { registerRecordRoutes } from './modules/objects/records.routes.js';
import { Erasure } from './modules/privacy/privacy.schemas.js';
import { registerPrivacyRoutes } from './modules/privacy/privacy.routes.js';
import { createAuthenticator } from './modules/orgs/orgs.service.js';
import { MinimalDelivery, MinimalWebhook, Webhook, WebhookDelivery } from './modules/webhooks/webhooks.schemas.js';
import { registerWebhookRoutes } from './modules/webhooks/webhooks.routes.js';

export const VERSION = '1.0.0';

export interface BuildOptions {
  /** false silences request logs (tests); a pino destination stream may be given instead. */
  logger?: boolean | { stream: NodeJS.WritableStream };
  /** Sees every route as it is registered (tests derive their route matrices from it). */
  onRoute?: (route: RouteOptions) => void;
  /** GET /metrics text when more than this app's registry counts (a multi-thread server, server.ts). */
  metricsExposition?: () => Promise<string>;
  /** True once the server is shutting down: `/ready` then answers 503 while every other route still serves (server.ts). */
  stopping?: () => boolean;
}

/** From the start of close(), every response ends its keep-alive connection, so close() doesn't wait on idle clients. */
function endConnectionsWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (closing) reply.header('connection', 'close');
    done();
  });
}

/** The one app factory: `crm serve` and every test build the same application from an AppContext. */
export async function buildApp(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const loggers = opts.logger === false ? undefined : createLoggers(ctx.config.logLevel, typeof opts.logger === 'object' ? opts.logger.stream : undefined);
  const app = Fastify({
    ...(transportOptions(ctx.config) as FastifyServerOptions),
    ...(loggers ? { loggerInstance: loggers.app, childLoggerFactory: lazyChildLogger } : { logger: false }),
    genReqId: requestId,
    // One line per request (written in onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.bodyLimitBytes,
    trustProxy: ctx.config.trustProxy,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // While closing, requests still arriving on open keep-alive connections are served (the database is
    // open until the app has closed) and their connections ended, instead of Fastify's bare 503 body.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors,
  }) as unknown as FastifyInstance;
  boundServer(app.server, ctx.config);
  if (opts.onRoute) app.addHook('onRoute', opts.onRoute);
  app.setValidatorCompiler(createValidatorCompiler());
  app.removeContentTypeParser('text/plain');
  registerStrictJsonParser(app);
  registerTextGuard(app);
  registerSecurityHeaders(app);
  registerHostCheck(app);
  const bodyLimits = { single: ctx.config.bodyLimitBytes, batch: batchBodyLimit(ctx.config.bodyLimitBytes) };
  registerBodyLimits(app, bodyLimits, ctx.config.http);
  endConnectionsWhileClosing(app);
  registerMetrics(app, ctx, opts.metricsExposition);
  if (loggers) {
    const access = loggers.access;
    app.addHook('onClose', (_instance, done) => {
      loggers.close();
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      access(request, reply.statusCode, reply.elapsedTime);
      done();
    });
  }
  registerErrorHandling(app, bodyLimits);
  app.addHook('onRoute', refuseUndeclaredQuery);
  registerEntityTags(app, ctx.entityTagger);
  registerMinimalViews(app);
  await registerOpenApi(app, { version: VERSION, webhookEvents: { schema: WEBHOOK_EVENT_SCHEMA, section: webhooksSection } });
  app.addSchema(Lead);
  app.addSchema(Pagination);
  app.addSchema(Account);
  app.addSchema(Deal);
  app.addSchema(DealStage);
  app.addSchema(CustomObject);
  app.addSchema(ObjectRecord);
  app.addSchema(Webhook);
  app.addSchema(WebhookDelivery);
  app.addSchema(MinimalWebhook);
  app.addSchema(MinimalDelivery);
  app.addSchema(WebhookEventSchema);
  app.addSchema(Erasure);
  app.addSchema(User);
  app.addSchema(Note);
  app.addSchema(Task);
  app.addSchema(BatchItemError);
  app.addSchema(MinimalView);
  registerAuth(app, {
    authenticate: createAuthenticator(ctx),
    rateLimiter: ctx.rateLimiter,
    defaultLimitPerMinute: ctx.config.rateLimitPerMinute,
    ...(ctx.database.requestStarted ? { requestStarted: ctx.database.requestStarted } : {}),
  });
  registerCustomFieldChecks(app);
  registerHealthRoutes(app, ctx, opts.stopping);
  registerMcpRoutes(app, ctx, VERSION);

  await app.register(
    async (api) => {
      // With a key, the document also types that organization's custom objects.
      api.get('/openapi.json', { config: OPENAPI_DOCUMENT_CONFIG, schema: { hide: true } }, openApiDocumentHandler(app, ctx));
      registerMeRoutes(api, ctx);
      registerUserRoutes(api, ctx);
      registerLeadRoutes(api, ctx);
      registerAccountRoutes(api, ctx);
      registerDealRoutes(api, ctx);
      registerObjectRoutes(api, ctx);
      registerRecordRoutes(api, ctx);
      registerWebhookRoutes(api, ctx);
      registerFeedRoutes(api, ctx);
      registerPrivacyRoutes(api, ctx);
      registerNoteRoutes(api, ctx);
      registerTaskRoutes(api, ctx);
      registerTimelineRoutes(api, ctx);
    },
    { prefix: API_PREFIX },
  );
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await registerAdmin(app, ctx);
  return app;
}
