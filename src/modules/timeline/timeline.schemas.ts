import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { instant } from '../../lib/list-request.js';
import { WebhookEventSchema } from '../events/feed.routes.js';
import { Note } from '../notes/notes.schemas.js';
import { Task } from '../tasks/tasks.schemas.js';

export const MAX_TIMELINE_LIMIT = 100;
export const ENTRY_TYPES = ['event', 'note', 'task'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const TimelineQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ maxLength: 200, description: 'The `pagination.nextCursor` of the previous page.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMELINE_LIMIT, default: 25, description: `Entries per page (max ${MAX_TIMELINE_LIMIT}).` })),
    types: Type.Optional(Type.String({ maxLength: 100, description: `Comma-separated entry types to list (default: every type the key can read): ${ENTRY_TYPES.join(', ')}.` })),
    createdAfter: instant('Only entries whose `at` is strictly after this instant (ISO 8601 with Z or an offset).'),
    createdBefore: instant('Only entries whose `at` is strictly before this instant.'),
  },
  { additionalProperties: false },
);
export type TimelineQuery = Static<typeof TimelineQuery>;

export const TimelineEntry = Type.Object(
  {
    type: StringEnum(ENTRY_TYPES, { description: 'Which of `event`, `note` or `task` this entry carries.' }),
    at: Timestamp('When it happened: the event\'s createdAt, or when the note or task was created.'),
    event: Type.Optional(Type.Ref(WebhookEventSchema)),
    note: Type.Optional(Type.Ref(Note)),
    task: Type.Optional(Type.Ref(Task)),
  },
  { description: 'One entry: exactly one of `event`, `note`, `task`, named by `type`.' },
);
export type TimelineEntry = { type: EntryType; at: string; event?: Record<string, unknown>; note?: Static<typeof Note>; task?: Static<typeof Task> };

export const TimelineEnvelope = Envelope(
  Type.Object({
    timeline: Type.Array(TimelineEntry, { description: 'Newest first.' }),
    pagination: Type.Object({
      limit: Type.Integer(),
      nextCursor: Nullable(Type.String({ description: 'Pass it as `after` for the next page; null on the last page.' })),
    }),
  }),
);
