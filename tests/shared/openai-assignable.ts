/**
 * The shared wire types, checked against the official `openai` package's types: every value of a
 * shared type must be a valid value of the SDK's type. Type-checked by `npm run typecheck` and by
 * openai-assignable.test.ts (which compiles this file and expects no diagnostics). A line here
 * fails when a shared type drifts from what OpenAI clients send or expect.
 */
import type OpenAI from 'openai';
import type { PageResponse } from 'openai/core/pagination';
import type { ResponseItemList } from 'openai/resources/responses/input-items';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  Completion,
  CompletionChoice,
  CompletionRequest,
  Embedding,
  EmbeddingList,
  EmbeddingRequest,
  ModelList,
  ModelRecord,
  Usage,
} from '#shared/api/openai.js';
import type { InputItem, InputItemList, ResponseCreateRequest, ResponseDeleted, ResponseObject, ResponseStreamEvent } from '#shared/api/responses.js';

/** Compiles only when A is assignable to B. */
type Assignable<A extends B, B> = [A, B];

/**
 * Requests: clients often leave out fields the SDK's types mark required-but-nullable (a function
 * tool's `parameters`, `strict`), and Hearth accepts that, so request types are checked against the
 * SDK's params with every field optional: names and value types must still match.
 */
type Optional<T> = T extends (infer Item)[] ? Optional<Item>[] : T extends object ? { [Key in keyof T]?: Optional<T[Key]> } : T;

/**
 * The SDK adds `output_text` to a Response on the client (servers never send it), and the API
 * sends `usage: null` until a response completes although the SDK's type leaves null out.
 */
type SentResponse = Omit<OpenAI.Responses.Response, 'output_text' | 'usage'> & { usage?: OpenAI.Responses.Response['usage'] | null };
type Sent<Event> = Event extends { response: OpenAI.Responses.Response } ? Omit<Event, 'response'> & { response: SentResponse } : Event;

export type Checks = [
  // GET /v1/models, /v1/models/{id}
  Assignable<ModelRecord, OpenAI.Models.Model>,
  Assignable<ModelList, PageResponse<OpenAI.Models.Model>>,
  // POST /v1/chat/completions: what Hearth accepts is a request OpenAI defines; what it answers is what the SDK reads.
  Assignable<ChatCompletionRequest, Optional<OpenAI.Chat.ChatCompletionCreateParams>>,
  Assignable<ChatCompletion, OpenAI.Chat.ChatCompletion>,
  Assignable<ChatCompletionChunk, OpenAI.Chat.ChatCompletionChunk>,
  // POST /v1/completions: the answer is the SDK's Completion; a streamed chunk too, except that (as
  // OpenAI's API does) it sends finish_reason and usage null until the end, which the SDK's type leaves out.
  Assignable<CompletionRequest, Optional<OpenAI.CompletionCreateParams>>,
  Assignable<
    Omit<Completion, 'choices' | 'usage'> & { choices: (Omit<CompletionChoice, 'finish_reason'> & { finish_reason: 'stop' | 'length' })[]; usage?: Usage },
    OpenAI.Completion
  >,
  // POST/GET/DELETE /v1/responses
  // stream: boolean covers both of the SDK's overloads (ResponseCreateParamsStreaming and NonStreaming).
  Assignable<ResponseCreateRequest, Optional<ResponseCreateParamsBase>>,
  Assignable<InputItem, Optional<OpenAI.Responses.ResponseInputItem>>,
  Assignable<ResponseObject, SentResponse>,
  Assignable<ResponseStreamEvent, Sent<OpenAI.Responses.ResponseStreamEvent>>,
  Assignable<ResponseDeleted, { id: string; object: 'response'; deleted: boolean }>,
  // An empty page has no first or last item: Hearth sends null where the SDK's type says string.
  Assignable<InputItemList, Omit<ResponseItemList, 'first_id' | 'last_id'> & { first_id: string | null; last_id: string | null }>,
  // POST /v1/embeddings (a base64 embedding is a string on the wire; the SDK types the decoded array)
  Assignable<EmbeddingRequest, Optional<OpenAI.EmbeddingCreateParams>>,
  Assignable<Omit<Embedding, 'embedding'> & { embedding: number[] }, OpenAI.Embedding>,
  Assignable<Omit<EmbeddingList, 'data'> & { data: (Omit<Embedding, 'embedding'> & { embedding: number[] })[] }, OpenAI.CreateEmbeddingResponse>,
];
