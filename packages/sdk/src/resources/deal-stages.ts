import type { Core } from '../core.js';
import type { CallOptions, RequestBody } from '../types.js';
import type { DealStage } from './deals.js';

const STAGES = '/api/public/v1/deal-stages';

/** Where the deals of each removed stage go: `{ <removed key>: <kept key> }`. */
export type DealStageMoves = NonNullable<RequestBody<typeof STAGES, 'put'>['moveTo']>;

/** The organization's deal pipeline: read it (deals:read) or replace it (objects:admin). */
export function dealStagesResource(core: Core) {
  return {
    /** The stages in pipeline order; the first is a new deal's default. `etagOf(stages)` is the list's tag. */
    get: async (opts?: CallOptions): Promise<DealStage[]> => (await core.call(STAGES, 'get', {}, opts)).stages,
    /**
     * Replaces the whole list. A removed stage that deals are in needs a `moveTo` entry naming the kept stage
     * they move to (each move records deal.stage_changed); without it the call throws a 400 naming the stage.
     * With `{ ifMatch: etagOf(stages) }` of the list you edited, a change made meanwhile throws a 412 instead,
     * the current list (tagged) in `data.stages`.
     */
    put: async (stages: DealStage[], options: { moveTo?: DealStageMoves } = {}, opts?: CallOptions): Promise<DealStage[]> =>
      (await core.call(STAGES, 'put', { body: { stages, ...options } }, opts)).stages,
  };
}
