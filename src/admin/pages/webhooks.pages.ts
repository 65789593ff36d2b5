import type { FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { ALL_EVENTS, CreateWebhookBody, ListDeliveriesQuery, ListWebhooksQuery, UpdateWebhookBody, type Webhook } from '../../modules/webhooks/webhooks.schemas.js';
import { validateValue } from '../../http/validation.js';
import {
  checkWebhookInput,
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from '../../modules/webhooks/webhooks.service.js';
import { button, csrfField, errorSummary, pager, secretOnce } from '../components.js';
import { checkedBody, formBody, list, problemOf, queryPage, queryText, text, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import { listControlsOf, listControlsQuery, rangeErrors } from '../list-controls.js';
import { lastDeliveries } from './webhooks.store.js';
import {
  deliveryLog,
  endpointFilter,
  endpointFilterParams,
  endpointPanel,
  endpointSummary,
  WEBHOOK_LABELS,
  WEBHOOKS_PATH,
  webhookForm,
  webhooksTable,
  type EndpointFilters,
  type WebhookForm,
} from './webhooks.views.js';
import { editConflict, submittedVersion, type EditedItem } from './edit-version.js';

const ADMIN = { console: { access: 'admin' as const } };
const CRUMBS = ['Configuration', 'Marketplace', 'API and Webhooks'];
const NOTICES: Record<string, string> = {
  'test-sent': 'Test event queued: it appears in the delivery log below within a second or two.',
  enabled: 'Endpoint enabled.',
  disabled: 'Endpoint disabled: nothing is sent to it until it is enabled again.',
  resent: 'Delivery queued again: a new attempt goes out within a second.',
  saved: 'Endpoint saved.',
  deleted: 'Endpoint and its delivery log deleted.',
};
const SECRET_NOTE = 'Copy it now and keep it with the receiver: it will not be shown again. The receiver checks every delivery’s signature with it (the X-Service-Signature header, Stripe’s format, or the Standard Webhooks headers).';

type Params = { id: string };

function readForm(request: FastifyRequest): WebhookForm {
  const body = formBody(request);
  return { url: text(body, 'url').trim(), events: list(body, 'events'), description: text(body, 'description') };
}

/** "All events" wins over single types, as the API wants ["*"] alone. */
function toBody(form: WebhookForm, creating: boolean): Record<string, unknown> {
  const events = form.events.includes(ALL_EVENTS) ? [ALL_EVENTS] : form.events;
  const description = form.description.trim() === '' ? (creating ? undefined : null) : form.description;
  return { url: form.url, events, ...(description !== undefined ? { description } : {}) };
}

/** `enabled` as the API takes it: a boolean for true or false; anything else passed on as typed, for the schema to refuse. */
const enabledOf = (value: string): boolean | string => (value === 'true' ? true : value === 'false' ? false : value);

/** GET /webhooks' query for the list's filter, validated by its schema like the API's (400 next to a refused control). */
function endpointsQuery(request: FastifyRequest, f: EndpointFilters) {
  const controls = listControlsOf(request);
  const query = { ...(f.enabled ? { enabled: enabledOf(f.enabled) } : {}), ...(f.eventType ? { eventType: f.eventType } : {}), ...listControlsQuery(controls), page: queryPage(request), limit: 25 };
  return { controls, query, errors: [...validateValue(ListWebhooksQuery, query, 'query'), ...rangeErrors(controls)] };
}

const formOf = (w: Webhook): WebhookForm => ({ url: w.url, events: w.events, description: w.description ?? '' });

/** The form's text, events listed as the user checked them. */
const formText = (form: WebhookForm): Record<string, string> => ({ url: form.url, events: form.events.join(', '), description: form.description });

const EDITED_ENDPOINT: EditedItem<Webhook> = { key: 'webhook', noun: 'endpoint', labels: WEBHOOK_LABELS, formOf: (w) => formText(formOf(w)) };

/** The add form, or an endpoint's edit form saved against `version`. */
async function formPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { webhook?: Webhook; version?: string | undefined; form: WebhookForm; problem?: FormProblem; status?: number }) {
  const w = opts.webhook;
  return deps.render(request, reply, {
    title: w ? 'Edit endpoint' : 'Add endpoint',
    crumbs: CRUMBS,
    status: opts.status,
    body: webhookForm(request, {
      action: w ? `${WEBHOOKS_PATH}/${w.id}` : WEBHOOKS_PATH,
      form: opts.form,
      problem: opts.problem,
      submit: w ? 'Save endpoint' : 'Add endpoint',
      cancel: w ? `${WEBHOOKS_PATH}/${w.id}` : WEBHOOKS_PATH,
      version: opts.version,
    }),
  });
}

/** The endpoint with its actions and delivery log; `secret` once after a rotation, `problem` when an action was refused. */
async function endpointPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, id: string, opts: { secret?: string; problem?: FormProblem; status?: number } = {}) {
  const viewer = viewerOf(request);
  const org = viewer.organization;
  const w = await getWebhook(deps.ctx, org.id, id);
  const status = queryText(request, 'status');
  const controls = listControlsOf(request);
  const query = { ...(status ? { status } : {}), ...listControlsQuery(controls), page: queryPage(request), limit: 25 };
  const errors = [...validateValue(ListDeliveriesQuery, query, 'query'), ...rangeErrors(controls)];
  const log = errors.length ? undefined : await listWebhookDeliveries(deps.ctx, org.id, w.id, query as ListDeliveriesQuery);
  return deps.render(request, reply, {
    title: w.url,
    crumbs: CRUMBS,
    status: opts.status ?? (errors.length ? 400 : undefined),
    notice: NOTICES[queryText(request, 'notice')],
    body: html`${opts.secret ? secretOnce('New signing secret', opts.secret, `${SECRET_NOTE} The previous secret also signs deliveries for 24 hours.`) : ''}
${errorSummary(opts.problem, {})}
${endpointPanel(request, w, { timeZone: org.timezone, isAdmin: viewer.user.isAdmin })}
${deliveryLog(request, w, log, { timeZone: org.timezone, isAdmin: viewer.user.isAdmin, status, controls, errors })}`,
  });
}

/** An action on an endpoint: done, then back to its page with a notice; a refusal (e.g. disabled) shown on the page. */
async function act(deps: AdminDeps, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, notice: string, run: () => Promise<unknown>) {
  try {
    await run();
    return reply.redirect(`${WEBHOOKS_PATH}/${request.params.id}?notice=${notice}`, 303);
  } catch (err) {
    if (!(err instanceof AppError) || err.code === 'NOT_FOUND') throw err;
    return endpointPage(deps, request, reply, request.params.id, { problem: problemOf(err), status: err.status });
  }
}

/**
 * Configuration › Marketplace › API and Webhooks: endpoints with their status and last delivery; add one
 * (its signing secret shown once); per endpoint the delivery log with Resend, a test event, enable/disable,
 * secret rotation, edit and delete (confirmed on a page of its own, so it needs no script).
 */
export const webhooksModule: AdminModule = {
  name: 'webhooks',
  nav: [{ section: 'configuration', group: 'Marketplace', label: 'API and Webhooks', href: WEBHOOKS_PATH, order: 50, description: 'Send events to your own systems as they happen: endpoints, signing secrets, delivery logs.' }],
  objectPages: { webhook: WEBHOOKS_PATH },
  register(app, deps) {
    const { ctx } = deps;

    app.get('/config/webhooks', async (request, reply) => {
      const viewer = viewerOf(request);
      const filters: EndpointFilters = { enabled: queryText(request, 'enabled'), eventType: queryText(request, 'eventType') };
      const { controls, query, errors } = endpointsQuery(request, filters);
      const page = errors.length ? undefined : await listWebhooks(ctx, viewer.organization.id, query as ListWebhooksQuery);
      const last = await lastDeliveries(ctx.database.db, (page?.webhooks ?? []).map((w) => w.id));
      const filtered = Boolean(filters.enabled || filters.eventType || controls.from || controls.to);
      return deps.render(request, reply, {
        title: 'API and Webhooks',
        crumbs: ['Configuration', 'Marketplace'],
        status: errors.length ? 400 : undefined,
        notice: NOTICES[queryText(request, 'notice')],
        body: html`<p>Other systems read and change your data through the <a href="/docs">public API</a> with <a href="/admin/config/api-keys">API keys</a>, and hear about changes through webhooks: each event is POSTed, signed, to the endpoints that subscribe to it, and retried for up to 3 days.</p>
${viewer.user.isAdmin ? html`<p><a class="button button--primary" href="${WEBHOOKS_PATH}/new">Add endpoint</a></p>` : html`<p class="muted">Only administrators can add or change endpoints.</p>`}
${endpointFilter(filters, controls, errors)}
${page ? html`${webhooksTable(page.webhooks, last, viewer.organization.timezone, filtered)}${pager(WEBHOOKS_PATH, endpointFilterParams(filters, controls), page.pagination)}` : ''}`,
      });
    });

    app.get('/config/webhooks/new', { config: ADMIN }, async (request, reply) => formPage(deps, request, reply, { form: { url: '', events: [], description: '' } }));

    app.post('/config/webhooks', { config: ADMIN }, async (request, reply) => {
      const form = readForm(request);
      try {
        const input = checkedBody<CreateWebhookBody>(CreateWebhookBody, toBody(form, true));
        // DNS is checked before the transaction opens, as the API does.
        await checkWebhookInput(ctx, input);
        const created = await inTransaction(ctx, (trx) => createWebhook(ctx, trx, viewerOf(request).organization.id, input));
        return deps.render(request, reply, {
          title: 'Endpoint added',
          crumbs: CRUMBS,
          status: 201,
          body: html`${secretOnce('Signing secret', created.secret!, SECRET_NOTE)}
${endpointSummary(created)}
<p class="button-row"><a class="button button--primary" href="${WEBHOOKS_PATH}/${created.id}">Go to the endpoint</a> <a class="button button--secondary" href="${WEBHOOKS_PATH}">All endpoints</a></p>`,
        });
      } catch (err) {
        return formPage(deps, request, reply, { form, problem: problemOf(err), status: 400 });
      }
    });

    app.get<{ Params: Params }>('/config/webhooks/:id', async (request, reply) => endpointPage(deps, request, reply, request.params.id));

    app.get<{ Params: Params }>('/config/webhooks/:id/edit', { config: ADMIN }, async (request, reply) => {
      const w = await getWebhook(ctx, viewerOf(request).organization.id, request.params.id);
      return formPage(deps, request, reply, { webhook: w, version: ctx.entityTagger.tagOf(w), form: formOf(w) });
    });

    app.post<{ Params: Params }>('/config/webhooks/:id', { config: ADMIN }, async (request, reply) => {
      const org = viewerOf(request).organization.id;
      const w = await getWebhook(ctx, org, request.params.id);
      const form = readForm(request);
      const version = submittedVersion(formBody(request));
      try {
        const patch = checkedBody<UpdateWebhookBody>(UpdateWebhookBody, toBody(form, false));
        await checkWebhookInput(ctx, patch);
        await inTransaction(ctx, (trx) => updateWebhook(ctx, trx, org, w.id, patch, { ifMatch: version }));
        return reply.redirect(`${WEBHOOKS_PATH}/${w.id}?notice=saved`, 303);
      } catch (err) {
        const conflict = editConflict(ctx, err, EDITED_ENDPOINT, formText(form));
        if (conflict) return formPage(deps, request, reply, { webhook: conflict.item, version: conflict.version, form: formOf(conflict.item), problem: conflict.problem, status: 409 });
        return formPage(deps, request, reply, { webhook: w, version, form, problem: problemOf(err), status: 400 });
      }
    });

    app.post<{ Params: Params }>('/config/webhooks/:id/test', { config: ADMIN }, async (request, reply) => {
      const viewer = viewerOf(request);
      return act(deps, request, reply, 'test-sent', () => inTransaction(ctx, (trx) => sendTestEvent(ctx, trx, callerOfViewer(viewer), request.params.id)));
    });

    for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
      app.post<{ Params: Params }>(`/config/webhooks/:id/${action}`, { config: ADMIN }, async (request, reply) => {
        const org = viewerOf(request).organization.id;
        return act(deps, request, reply, `${action}d`, () => inTransaction(ctx, (trx) => updateWebhook(ctx, trx, org, request.params.id, { enabled })));
      });
    }

    app.post<{ Params: Params }>('/config/webhooks/:id/rotate', { config: ADMIN }, async (request, reply) => {
      const org = viewerOf(request).organization.id;
      const rotated = await inTransaction(ctx, (trx) => rotateWebhookSecret(ctx, trx, org, request.params.id));
      return endpointPage(deps, request, reply, rotated.id, { secret: rotated.secret! });
    });

    app.post<{ Params: Params & { deliveryId: string } }>('/config/webhooks/:id/deliveries/:deliveryId/resend', { config: ADMIN }, async (request, reply) => {
      const org = viewerOf(request).organization.id;
      return act(deps, request, reply, 'resent', () => inTransaction(ctx, (trx) => retryWebhookDelivery(ctx, trx, org, request.params.id, request.params.deliveryId)));
    });

    app.get<{ Params: Params }>('/config/webhooks/:id/delete', { config: ADMIN }, async (request, reply) => {
      const w = await getWebhook(ctx, viewerOf(request).organization.id, request.params.id);
      return deps.render(request, reply, {
        title: 'Delete endpoint',
        crumbs: CRUMBS,
        body: html`<section class="panel panel--danger" aria-labelledby="confirm"><h2 id="confirm">Delete ${w.url}?</h2>
<p>No more events are sent to it, and its delivery log is deleted with it. This can’t be undone; to pause deliveries instead, disable it.</p>
<form method="post" action="${WEBHOOKS_PATH}/${w.id}/delete" class="form-actions">${csrfField(request)}${button('Delete endpoint', 'danger')} <a href="${WEBHOOKS_PATH}/${w.id}">Cancel</a></form></section>`,
      });
    });

    app.post<{ Params: Params }>('/config/webhooks/:id/delete', { config: ADMIN }, async (request, reply) => {
      await deleteWebhook(ctx, viewerOf(request).organization.id, request.params.id);
      return reply.redirect(`${WEBHOOKS_PATH}?notice=deleted`, 303);
    });
  },
};
