import { HearthError } from '../../errors.js';
import { rangeInWords, typesInWords } from '../../schema-messages.js';
import type { OpenaiContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString } from '../schema.js';
import type { InputItem, InputItemList, ListedInputItem } from '#shared/api/responses.js';
import { responseIdParams } from './responses.js';

interface Query {
  after?: string;
  before?: string;
  /** Query strings are text: checked by limitOf. */
  limit?: string;
  order?: 'asc' | 'desc';
}

export const inputItemsQuery = {
  type: 'object',
  properties: {
    after: nonEmptyString(),
    before: nonEmptyString(),
    limit: { type: 'string' },
    order: { enum: ['asc', 'desc'] },
    // Extra output to include (`include` or `include[]`): none applies to text-only items, so it is accepted and has no effect.
    include: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    'include[]': { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
  },
} as const;

/** GET /v1/responses/{id}/input_items: the input items of a stored response, as a cursor page. */
export const inputItemRoutes: RoutePlugin<OpenaiContext, 'responses'> = async (app, { responses }) => {
  app.get<{ Params: { id: string }; Querystring: Query }>(
    '/v1/responses/:id/input_items',
    { schema: { params: responseIdParams, querystring: inputItemsQuery } },
    async (request): Promise<InputItemList> => {
      const { id } = request.params;
      const items = responses.inputItems(id);
      if (!items) throw new HearthError('response_not_found', `No stored response has the id "${id}".`);
      return page(
        items.map((item, index) => listed(item, id, index)),
        request.query,
      );
    },
  );
};

/** OpenAI's paging: `order` first (default newest first), then the items after `after` and before `before`, `limit` of them (default 20). */
function page(items: ListedInputItem[], query: Query): InputItemList {
  const ordered = query.order === 'asc' ? items : [...items].reverse();
  const position = (id: string, param: string) => {
    const index = ordered.findIndex((item) => item.id === id);
    if (index < 0) throw new HearthError('invalid_request_error', `${param} "${id}" is not an item of this response.`, { param });
    return index;
  };
  const start = query.after === undefined ? 0 : position(query.after, 'after') + 1;
  const end = query.before === undefined ? ordered.length : position(query.before, 'before');
  const window = ordered.slice(start, Math.max(start, end));
  const data = window.slice(0, limitOf(query.limit));
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: window.length > data.length };
}

function limitOf(text: string | undefined): number {
  if (text === undefined) return 20;
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > 100)
    throw new HearthError('invalid_request_error', `limit must be ${typesInWords('integer')} ${rangeInWords({ minimum: 1, maximum: 100 })}.`, {
      param: 'limit',
    });
  return limit;
}

/**
 * An input item as OpenAI lists it: typed, with status and content parts. Items sent without an
 * id get one derived from the response and their position, so paging cursors stay stable.
 */
function listed(item: InputItem, responseId: string, index: number): ListedInputItem {
  const suffix = `${responseId.replace(/^resp_/, '')}_${index}`;
  const status = item.status ?? 'completed';
  switch (item.type ?? 'message') {
    case 'function_call': {
      const call = item as Extract<InputItem, { type: 'function_call' }>;
      return { type: 'function_call', id: call.id ?? `fc_${suffix}`, status, call_id: call.call_id, name: call.name, arguments: call.arguments };
    }
    case 'function_call_output': {
      const output = item as Extract<InputItem, { type: 'function_call_output' }>;
      const parts =
        typeof output.output === 'string'
          ? output.output
          : output.output.map((part) => (part.type === 'input_image' ? { ...part, detail: part.detail ?? 'auto' } : part));
      return { type: 'function_call_output', id: output.id ?? `fco_${suffix}`, status, call_id: output.call_id, output: parts };
    }
    case 'reasoning': {
      const reasoning = item as Extract<InputItem, { type: 'reasoning' }>;
      return { ...reasoning, id: reasoning.id ?? `rs_${suffix}`, status };
    }
    default: {
      const message = item as Extract<InputItem, { role: string }>;
      const id = message.id ?? `msg_${suffix}`;
      const parts = typeof message.content === 'string' ? [{ type: 'input_text' as const, text: message.content }] : message.content;
      if (message.role === 'assistant') {
        const texts = parts.map((part) => ('text' in part ? part.text : ''));
        return { type: 'message', id, status, role: 'assistant', content: texts.map((text) => ({ type: 'output_text', text, annotations: [] })) };
      }
      // A user message's images are listed as they were sent.
      const content = parts.map((part) =>
        part.type === 'input_image' ? { ...part, detail: part.detail ?? 'auto' } : { type: 'input_text' as const, text: 'text' in part ? part.text : '' },
      );
      return { type: 'message', id, status, role: message.role, content };
    }
  }
}
