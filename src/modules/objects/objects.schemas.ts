import { Type, type Static } from '@sinclair/typebox';
import { Envelope, StringEnum, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams, NAMED_SORTS, SortQuery } from '../../lib/list-request.js';

export const FIELD_TYPES = ['text', 'long_text', 'number', 'boolean', 'date', 'datetime', 'select', 'multi_select', 'email', 'phone', 'url', 'relation'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** The built-in kinds a relation field can point at; any other target is an object slug of the organization. */
export const BUILT_IN_TARGETS = ['leads', 'accounts', 'deals'] as const;

/** Keys every record has; a field can't take one of them (the record shape is flat). */
export const RESERVED_KEYS = ['id', 'objectSlug', 'stage', 'externalId', 'createdAt', 'updatedAt', 'deletedAt'] as const;

/** camelCase (`visitDate`, the API's own style) or snake_case (`due_on`); names on Object.prototype are refused apart (definition.ts). */
export const FIELD_KEY_PATTERN = '^[a-z][a-zA-Z0-9_]{0,49}$';
export const STAGE_KEY_PATTERN = '^[a-z][a-z0-9_]{0,49}$';
export const SLUG_PATTERN = '^[a-z][a-z0-9_-]{0,49}$';
export const MAX_FIELDS = 100;
/** The most standard fields a built-in lists (leads: 17): a built-in's PATCH may send them back beside MAX_FIELDS custom ones. */
export const MAX_STANDARD_FIELDS = 17;
export const MAX_STAGES = 50;
export const MAX_OPTIONS = 200;

const label = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Display label.' });

export const FieldDefinition = Type.Object(
  {
    key: Type.String({
      pattern: FIELD_KEY_PATTERN,
      description:
        'The record property name, camelCase (`visitDate`) or snake_case (`due_on`): a lower-case letter, then letters, digits and _. Not a reserved key (id, objectSlug, stage, createdAt, updatedAt, deletedAt) nor a name every JavaScript object has (constructor, toString, valueOf, hasOwnProperty, …).',
    }),
    label,
    type: StringEnum(FIELD_TYPES, {
      description:
        'Value type; `date` is date-only (YYYY-MM-DD); `multi_select` is an array of distinct options; `relation` is the id of a live item of `target`.',
    }),
    required: Type.Optional(Type.Boolean({ default: false, description: 'A record must always have a value (default false).' })),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: MAX_OPTIONS,
        uniqueItems: true,
        description: 'The allowed values of a `select` or `multi_select` field (required for those, refused on other types).',
      }),
    ),
    target: Type.Optional(
      Type.String({
        pattern: SLUG_PATTERN,
        description: 'What a `relation` field points at: `leads`, `accounts`, `deals` or the slug of an object of the organization (required for relation, refused on other types).',
      }),
    ),
    role: Type.Optional(StringEnum(['due'] as const, { description: '`due` on one date field: drives the overdue filter and the record.due reminder.' })),
  },
  { additionalProperties: false },
);
export type FieldDefinition = Static<typeof FieldDefinition>;

export const StageDefinition = Type.Object(
  {
    key: Type.String({ pattern: STAGE_KEY_PATTERN, description: 'Stable key stored on records: lower-case letters, digits and _, starting with a letter.' }),
    label,
  },
  { additionalProperties: false },
);
export type StageDefinition = Static<typeof StageDefinition>;

const fields = Type.Array(FieldDefinition, { maxItems: MAX_FIELDS, description: 'The fields, in display order.' });
const stages = Type.Array(StageDefinition, { maxItems: MAX_STAGES, description: 'The ordered stages; new records start in the first one. Empty: records have no stage.' });
const name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Display name.' });

export const CreateObjectBody = Type.Object(
  {
    slug: Type.String({ pattern: SLUG_PATTERN, description: 'Identifier in URLs, unique in the organization: lower-case letters, digits, _ and -.' }),
    name,
    fields: Type.Optional(fields),
    stages: Type.Optional(stages),
  },
  {
    additionalProperties: false,
    examples: [
      {
        slug: 'projects',
        name: 'Projects',
        fields: [
          { key: 'title', label: 'Title', type: 'text', required: true },
          { key: 'priority', label: 'Priority', type: 'select', options: ['low', 'high'] },
          { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
        ],
        stages: [{ key: 'planned', label: 'Planned' }, { key: 'done', label: 'Done' }],
      },
    ],
  },
);
export type CreateObjectBody = Static<typeof CreateObjectBody>;

/**
 * A field of a PATCH: a FieldDefinition, or a standard field of leads, accounts or deals sent back as GET shows it
 * (`readOnly: true`), so that a definition read, edited and sent back is accepted (custom-fields.service.ts).
 */
export const UpdatedFieldDefinition = Type.Object(
  {
    ...FieldDefinition.properties,
    readOnly: Type.Optional(
      Type.Literal(true, { description: 'A standard field of leads, accounts or deals, as GET shows it: accepted unchanged and ignored; custom objects have none.' }),
    ),
  },
  { additionalProperties: false },
);
export type UpdatedFieldDefinition = Static<typeof UpdatedFieldDefinition>;

export const UpdateObjectBody = Type.Object(
  {
    name: Type.Optional(name),
    fields: Type.Optional(
      Type.Array(UpdatedFieldDefinition, {
        maxItems: MAX_FIELDS + MAX_STANDARD_FIELDS,
        description: `The fields, in display order: at most ${MAX_FIELDS} custom fields, plus a built-in's standard fields when sent back as GET lists them.`,
      }),
    ),
    stages: Type.Optional(stages),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      '`fields` and `stages`, when sent, are the complete new lists. Adding, relabelling and adding select options is always allowed; removing or retyping a field that has data (a relation\'s new `target` is a retype), removing a stage or option in use, or making a field required while records lack it is refused.',
  },
);
export type UpdateObjectBody = Static<typeof UpdateObjectBody>;

export const CustomObject = Type.Object(
  {
    slug: Type.String(),
    name: Type.String(),
    builtIn: Type.Boolean({ description: 'true for leads, accounts and deals: their standard fields are listed read-only; PATCH /objects/{slug} adds custom fields.' }),
    fields: Type.Array(
      Type.Object({
        key: Type.String(),
        label: Type.String(),
        type: StringEnum(FIELD_TYPES),
        required: Type.Boolean(),
        readOnly: Type.Optional(Type.Literal(true, { description: 'A standard field of a built-in resource.' })),
        options: Type.Optional(Type.Array(Type.String())),
        target: Type.Optional(Type.String()),
        role: Type.Optional(StringEnum(['due'] as const)),
      }),
    ),
    stages: Type.Array(Type.Object({ key: Type.String(), label: Type.String() })),
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
  },
  { $id: 'CustomObject' },
);
export type CustomObject = Static<typeof CustomObject>;

export const SlugParams = Type.Object({ slug: Type.String({ description: 'Object slug.' }) });
export const ListObjectsQuery = Type.Object({ ...ListParams, ...SortQuery(NAMED_SORTS) }, { additionalProperties: false });
export type ListObjectsQuery = Static<typeof ListObjectsQuery>;

export const ObjectEnvelope = Envelope(Type.Object({ object: Type.Ref(CustomObject) }));
export const ObjectListEnvelope = Envelope(Type.Object({ objects: Type.Array(Type.Ref(CustomObject)), pagination: Type.Ref(Pagination) }));
