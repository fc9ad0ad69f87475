// The pages of a stored response's input items (`GET /v1/responses/{id}/input_items`).
import type { InputItemResource } from './responses-request.js';

export interface ItemListQuery {
  readonly after?: string | undefined;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
}

/** A page of a response's input items (OpenAI's `ResponseItemList`), after the `after` item. */
export function itemListPage(items: readonly InputItemResource[], query: ItemListQuery) {
  const ordered = query.order === 'asc' ? [...items] : [...items].reverse();
  const start =
    query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
  const data = start === 0 && query.after !== undefined ? [] : ordered.slice(start);
  const page = data.slice(0, query.limit);
  return {
    object: 'list' as const,
    data: page,
    first_id: page[0]?.id ?? '',
    last_id: page[page.length - 1]?.id ?? '',
    has_more: data.length > page.length,
  };
}
