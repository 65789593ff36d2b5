import type { ColumnType, Generated } from 'kysely';

/**
 * Row shapes as both dialects store them: ids are 24-hex text, timestamps ISO-8601 UTC text written by the
 * app, flags 0/1 integers, JSON as text. Stores map rows to domain objects; nothing else sees these types.
 */
export interface OrganizationsTable {
  id: string;
  name: string;
  timezone: string;
  created_at: string;
  updated_at: string;
}

export interface UsersTable {
  id: string;
  organization_id: string;
  name: string;
  email_enc: string;
  email_bidx: string;
  password_hash: string | null;
  is_admin: number;
  /** Null while the user is active (migration 0023). */
  deactivated_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  user_id: string | null;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string;
  rate_limit_per_minute: number | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface IdempotencyKeysTable {
  organization_id: string;
  key: string;
  request_hash: string;
  state: 'processing' | 'done';
  response_status: number | null;
  response_body: string | null;
  locked_until: string;
  created_at: string;
  expires_at: string;
  /** The resource a stored response describes (migration 0012), so an erasure can remove the response. */
  resource_id: string | null;
}

/** When the row went to the trash (contract §7), null while live; never written by an insert. */
export type TrashedAt = ColumnType<string | null, string | null | undefined, string | null>;

export interface LeadsTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  name: string;
  email_enc: string | null;
  email_bidx: string | null;
  phone_enc: string | null;
  phone_bidx: string | null;
  source: string | null;
  source_campaign: string | null;
  status: string;
  company: string | null;
  title: string | null;
  notes: string | null;
  owner_id: string | null;
  account_id: string | null;
  duplicate_of: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: TrashedAt;
  /** The integrator's own key (contract §8), unique per organization (records: per object). */
  external_id: string | null;
  /** Custom field values as JSON (migration 0019); null when the item has none. */
  custom: string | null;
}

export interface AssignmentRulesTable {
  organization_id: string;
  rules: string;
  updated_at: string;
}

export interface RoundRobinCursorsTable {
  organization_id: string;
  rule_id: string;
  position: number;
}

export interface EventsTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  type: string;
  object: string;
  object_id: string;
  payload: string;
  created_at: string;
}

export interface SystemSecretsTable {
  name: string;
  value_enc: string;
  created_at: string;
}

export interface AccountsTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  name: string;
  domain: string | null;
  email_enc: string | null;
  email_bidx: string | null;
  phone_enc: string | null;
  phone_bidx: string | null;
  industry: string | null;
  website: string | null;
  owner_id: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: TrashedAt;
  /** The integrator's own key (contract §8), unique per organization (records: per object). */
  external_id: string | null;
  /** Custom field values as JSON (migration 0019); null when the item has none. */
  custom: string | null;
}

export interface DealsTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  name: string;
  stage: string;
  /** Exact decimal text, e.g. '1234.50'. */
  amount: string | null;
  currency: string | null;
  account_id: string | null;
  lead_id: string | null;
  owner_id: string | null;
  /** Calendar day 'YYYY-MM-DD'. */
  expected_close_date: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: TrashedAt;
  /** The integrator's own key (contract §8), unique per organization (records: per object). */
  external_id: string | null;
  /** Custom field values as JSON (migration 0019); null when the item has none. */
  custom: string | null;
}

export interface DealStagesTable {
  organization_id: string;
  /** JSON array of {key, label, kind}. */
  stages: string;
  updated_at: string;
}

export interface CustomObjectsTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  slug: string;
  name: string;
  /** JSON: {fields: [...], stages: [...]}. */
  definition: string;
  created_at: string;
  updated_at: string;
}

export interface RecordsTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  object_id: string;
  stage: string | null;
  /** JSON of the field values in stored form (dates YYYY-MM-DD, e-mails and phones encrypted). */
  data: string;
  /** Lower-cased text and long_text values, for substring search. */
  search_text: string;
  /** The value of the object's due-role date field, for the overdue filter. */
  due_date: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: TrashedAt;
  /** The integrator's own key (contract §8), unique per organization (records: per object). */
  external_id: string | null;
}

export interface RecordRemindersTable {
  record_id: string;
  organization_id: string;
  due_date: string;
  fire_at: string;
  fired_at: string | null;
}

export interface NotesTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  /** lead, account, deal or record: the kind as events name it. */
  target_object: string;
  target_id: string;
  /** Records only: their object's slug. */
  target_slug: string | null;
  /** The markdown body, encrypted (AES-256-GCM, bound to the note). */
  body_enc: string;
  created_at: string;
  updated_at: string;
  deleted_at: TrashedAt;
  /** When the item it is on went to the trash (the note is hidden with it); null while that item is live. */
  target_deleted_at: TrashedAt;
}

export interface TasksTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  target_object: string | null;
  target_id: string | null;
  target_slug: string | null;
  title: string;
  /** A calendar day 'YYYY-MM-DD'. */
  due_date: string | null;
  assignee_id: string | null;
  status: string;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: TrashedAt;
  /** As on notes: the trash time of the task's target, null while it is live (or the task has none). */
  target_deleted_at: TrashedAt;
}

export interface TaskRemindersTable {
  task_id: string;
  organization_id: string;
  due_date: string;
  fire_at: string;
  fired_at: string | null;
}

export interface AdminSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  organization_id: string;
  csrf_token: string;
  ip: string;
  user_agent: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  absolute_expires_at: string;
}

export interface AdminSignInThrottleTable {
  key: string;
  failures: number;
  last_failure_at: string;
  locked_until: string | null;
}

export interface AdminSetupTokensTable {
  token_hash: string;
  organization_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface WebhookEndpointsTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  url: string;
  description: string | null;
  /** JSON array of event types, or ["*"]. */
  events: string;
  enabled: number;
  disabled_reason: string | null;
  failing_since: string | null;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: string | null;
  /** Outbox position after which this (failing) endpoint's events are deferred: no delivery rows yet. */
  backlog_seq: number | string | null;
  backlog_txid: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  due_at: string | null;
  lease_token: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptsTable {
  seq: Generated<number>;
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  response_status: number | null;
  response_excerpt: string | null;
  error: string | null;
  succeeded: number;
}

export interface WebhookDispatchStateTable {
  name: string;
  last_seq: number;
  /** PostgreSQL: the xid8 (as text) of the last fanned-out event's transaction; '0' on SQLite. */
  last_txid: string;
  updated_at: string;
}

export interface PrivacyErasuresTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  /** The blind indexes of the erased value: it can be recognized again, never read. */
  email_bidx: string | null;
  phone_bidx: string | null;
  reason: string | null;
  matched_leads: number;
  matched_accounts: number;
  /** Migration 0027: 0 on receipts written before it. */
  matched_deals: number;
  matched_records: number;
  /** JSON of the Actor who asked. */
  actor: string;
  requested_at: string;
  completed_at: string;
}

export interface RecordContactsTable {
  record_id: string;
  bidx: string;
  organization_id: string;
}

/** The filterable values of records (migration 0016, modules/objects/record-values.ts). */
export interface RecordValuesTable {
  record_seq: number;
  object_id: string;
  field_key: string;
  /** 0, or the option's place in a multi_select value (one row per option). */
  position: Generated<number>;
  num_value: number | null;
  text_value: string | null;
}

/** Custom fields of leads, accounts and deals: one definition per organization and resource (migration 0019). */
export interface BuiltinFieldsTable {
  organization_id: string;
  resource: string;
  definition: string;
  created_at: string;
  updated_at: string;
}

/** The filterable custom values of leads, accounts and deals (migration 0019, modules/fields/custom-values.ts). */
export interface ItemValuesTable {
  organization_id: string;
  resource: string;
  item_id: string;
  field_key: string;
  /** 0, or the option's place among a multi_select's values (migration 0024). */
  position: Generated<number>;
  num_value: number | null;
  text_value: string | null;
}

export interface PrivacyBackfillTable {
  name: string;
  done_seq: number;
  upto_seq: number;
}

export interface DB {
  organizations: OrganizationsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  leads: LeadsTable;
  assignment_rules: AssignmentRulesTable;
  round_robin_cursors: RoundRobinCursorsTable;
  events: EventsTable;
  system_secrets: SystemSecretsTable;
  accounts: AccountsTable;
  deals: DealsTable;
  deal_stages: DealStagesTable;
  custom_objects: CustomObjectsTable;
  records: RecordsTable;
  record_reminders: RecordRemindersTable;
  notes: NotesTable;
  tasks: TasksTable;
  task_reminders: TaskRemindersTable;
  admin_sessions: AdminSessionsTable;
  admin_sign_in_throttle: AdminSignInThrottleTable;
  admin_setup_tokens: AdminSetupTokensTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_dispatch_state: WebhookDispatchStateTable;
  privacy_erasures: PrivacyErasuresTable;
  record_contacts: RecordContactsTable;
  record_values: RecordValuesTable;
  builtin_fields: BuiltinFieldsTable;
  item_values: ItemValuesTable;
  privacy_backfill: PrivacyBackfillTable;
}
