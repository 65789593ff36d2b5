export { createClient, type ClientOptions, type CrmClient } from './client.js';
export { CrmApiError, CrmConnectionError } from './errors.js';
export { verifyWebhook, WebhookVerificationError, SIGNATURE_HEADER, type HeadersLike, type VerifyWebhookOptions, type WebhookVerificationReason } from './webhooks.js';
export type { WebhookActor, WebhookEvent, WebhookEventType } from './webhook-event.js';
export type { Lead, LeadCreate, LeadPage, LeadQuery, LeadUpdate } from './resources/leads.js';
export type { Me } from './resources/me.js';
export type { CallOptions, CreateOptions, ErrorCode, FieldError, Pagination } from './types.js';
export type { components, paths } from './generated/openapi.js';
