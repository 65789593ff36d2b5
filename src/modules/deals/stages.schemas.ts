import { Type, type Static } from '@sinclair/typebox';
import { Envelope, StringEnum } from '../../http/schemas.js';

export const STAGE_KINDS = ['open', 'won', 'lost'] as const;
export const STAGE_KEY_PATTERN = '^[a-z][a-z0-9_]{0,49}$';
export const MAX_STAGES = 50;

const stageProperties = {
  key: Type.String({ pattern: STAGE_KEY_PATTERN, description: 'Stable identifier used in `deal.stage`: lower-case letters, digits and _, starting with a letter, at most 50 characters.' }),
  label: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Display name.' }),
  kind: StringEnum(STAGE_KINDS, { description: '`open` while the deal is in progress; `won` or `lost` once it is closed.' }),
};

export const DealStage = Type.Object(stageProperties, { $id: 'DealStage', additionalProperties: false });
export type DealStage = Static<typeof DealStage>;

/** The document `crm stages set --file` reads: `{"stages": [...]}`, in pipeline order. */
export const DealStagesDocument = Type.Object(
  { stages: Type.Array(Type.Object(stageProperties, { additionalProperties: false }), { minItems: 1, maxItems: MAX_STAGES }) },
  { additionalProperties: false },
);
export type DealStagesDocument = Static<typeof DealStagesDocument>;

const stageKey = (description: string) => Type.String({ pattern: STAGE_KEY_PATTERN, description });

/** PUT /deal-stages: the new list, and where the deals of each removed stage go. */
export const PutDealStagesBody = Type.Object(
  {
    stages: DealStagesDocument.properties.stages,
    moveTo: Type.Optional(
      Type.Record(stageKey('A stage the new list removes.'), stageKey('A stage of the new list.'), {
        description: 'For each removed stage that deals are in: the kept stage they move to (each move records deal.stage_changed).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ stages: [{ key: 'discovery', label: 'Discovery', kind: 'open' }, { key: 'won', label: 'Won', kind: 'won' }, { key: 'lost', label: 'Lost', kind: 'lost' }], moveTo: { qualification: 'discovery', proposal: 'discovery', negotiation: 'discovery' } }],
  },
);
export type PutDealStagesBody = Static<typeof PutDealStagesBody>;

export const DealStagesEnvelope = Envelope(
  Type.Object({
    stages: Type.Array(Type.Ref(DealStage), {
      description: "The organization's deal stages in pipeline order; the first is the default stage of a new deal.",
    }),
  }),
);
