import type { FastifyRequest } from 'fastify';
import type { DealStage } from '../../modules/deals/stages.schemas.js';
import { badge } from '../components.js';
import { dayOnly, money } from '../format.js';
import { plural } from '../../lib/plural.js';
import { href, html, type SafeHtml } from '../html.js';
import type { BoardCard } from './board.store.js';
import { DEALS_PATH, moveForm, type DealFilters } from './deals.views.js';

/** Cards shown per column; the rest are one link away, in the table filtered by that stage. */
export const BOARD_CARDS = 10;

export interface BoardColumn {
  stage: DealStage;
  deals: BoardCard[];
  total: number;
}

function card(request: FastifyRequest, deal: BoardCard, stages: readonly DealStage[], people: ReadonlyMap<string, string>, back: string): SafeHtml {
  const facts = [
    deal.amount !== null ? html`<span>${money(deal.amount, deal.currency)}</span>` : '',
    deal.ownerId ? html`<span>${people.get(deal.ownerId) ?? 'Unknown owner'}</span>` : '',
    deal.expectedCloseDate ? html`<span>Closes ${dayOnly(deal.expectedCloseDate)}</span>` : '',
  ].filter((f) => f !== '');
  return html`<li class="deal-card">
  <a class="deal-card-name" href="${DEALS_PATH}/${deal.id}">${deal.name}</a>
  ${facts.length ? html`<p class="deal-card-facts">${facts}</p>` : ''}
  ${moveForm(request, deal, stages, back)}
</li>`;
}

const KIND_BADGE: Record<DealStage['kind'], SafeHtml | ''> = { open: '', won: badge('Won', 'good'), lost: badge('Lost', 'bad') };

/**
 * The deals by stage: one column per stage in pipeline order, newest deals first, at most BOARD_CARDS each;
 * each card moves to another stage with its own small form, so the board works without script.
 */
export function dealBoard(request: FastifyRequest, columns: readonly BoardColumn[], filters: DealFilters, people: ReadonlyMap<string, string>, back: string): SafeHtml {
  const stages = columns.map((c) => c.stage);
  const sections = columns.map((c, i) => {
    const more = c.total - c.deals.length;
    const moreHref = href(DEALS_PATH, { stage: c.stage.key, q: filters.q || undefined, ownerId: filters.ownerId || undefined });
    return html`<section class="board-column" aria-labelledby="col-${i}">
  <h2 id="col-${i}"><span>${c.stage.label}</span> ${KIND_BADGE[c.stage.kind]} <span class="board-count">${plural(c.total, 'deal')}</span></h2>
  ${c.deals.length ? html`<ol class="board-cards">${c.deals.map((d) => card(request, d, stages, people, back))}</ol>` : html`<p class="empty">No deals.</p>`}
  ${more > 0 ? html`<p class="board-more"><a href="${moreHref}">${plural(more, 'more deal')} in ${c.stage.label}</a></p>` : ''}
</section>`;
  });
  return html`<div class="board" role="region" aria-label="Deals by stage" tabindex="0">${sections}</div>`;
}
