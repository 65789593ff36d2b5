import { Type, type Static } from '@sinclair/typebox';
import { Id, StringEnum } from '../../http/schemas.js';

export const LEAD_SOURCES = ['WEBSITE', 'REFERRAL', 'EMAIL', 'PHONE', 'SOCIAL', 'EVENT', 'ADVERTISING', 'PARTNER', 'IMPORT', 'OTHER'] as const;

/** `rules.json` of `crm rules set`: evaluated in order, the first rule whose `match` fits sets the owner. */
export const AssignmentRule = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, description: 'Stable id; round-robin position is kept per rule id.' }),
    match: Type.Object(
      {
        source: Type.Optional(StringEnum(LEAD_SOURCES)),
        sourceCampaign: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      },
      { additionalProperties: false, description: 'Every given field must equal the lead\'s; {} matches every lead.' },
    ),
    assign: Type.Union([
      Type.Object({ type: Type.Literal('user'), userId: Id() }, { additionalProperties: false }),
      Type.Object({ type: Type.Literal('round_robin'), userIds: Type.Array(Id(), { minItems: 1, maxItems: 500, uniqueItems: true }) }, { additionalProperties: false }),
    ]),
  },
  { additionalProperties: false },
);
export type AssignmentRule = Static<typeof AssignmentRule>;

export const AssignmentRules = Type.Object({ rules: Type.Array(AssignmentRule, { maxItems: 200 }) }, { additionalProperties: false });
export type AssignmentRules = Static<typeof AssignmentRules>;
