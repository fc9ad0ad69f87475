// OpenAI's Responses request as this service reads it: the body's fields (deliberately partial:
// the schema in responses.schemas.ts checks their outline, every other field is ignored), what a
// response repeats of it, and the chat turn it becomes before a chain's history and a model are
// added. Types, and the check every required text field shares.
import { MissingParameterError } from '../../errors/app-error.js';
import type { ChatParams, ChatTurn } from '../../models/spec.js';

/** A content part of an input message, as the routes' schema has checked its outline. */
export interface InputPartBody {
  readonly type: string;
  readonly text?: string | undefined;
  readonly image_url?: string | null | undefined;
  readonly file_id?: string | null | undefined;
  readonly file_data?: string | undefined;
  readonly file_url?: string | undefined;
  readonly filename?: string | undefined;
  readonly detail?: string | undefined;
  readonly refusal?: string | undefined;
  readonly [field: string]: unknown;
}

/** An input item: a message, a function call, a function call's output, or another type. */
export interface InputItemBody {
  readonly type?: string | null | undefined;
  readonly id?: string | null | undefined;
  readonly role?: string | undefined;
  readonly content?: string | readonly InputPartBody[] | undefined;
  readonly call_id?: string | null | undefined;
  readonly name?: string | null | undefined;
  readonly arguments?: string | undefined;
  readonly output?: string | readonly InputPartBody[] | undefined;
  readonly [field: string]: unknown;
}

export interface ToolBody {
  readonly type: string;
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly parameters?: Readonly<Record<string, unknown>> | null | undefined;
  readonly strict?: boolean | null | undefined;
  readonly [field: string]: unknown;
}

export type ToolChoiceBody =
  | 'none'
  | 'auto'
  | 'required'
  | {
      readonly type: string;
      readonly name?: string | undefined;
      readonly [field: string]: unknown;
    };

export interface TextFormatBody {
  readonly type: string;
  readonly name?: string | undefined;
  readonly description?: string | undefined;
  readonly schema?: Readonly<Record<string, unknown>> | undefined;
  readonly strict?: boolean | null | undefined;
  readonly [field: string]: unknown;
}

/** A `POST /v1/responses` body: the fields the service reads; every other one is ignored. */
export interface ResponseRequestBody {
  readonly model?: string | undefined;
  readonly input?: string | readonly InputItemBody[] | undefined;
  readonly instructions?: string | null | undefined;
  readonly tools?: readonly ToolBody[] | undefined;
  readonly tool_choice?: ToolChoiceBody | undefined;
  readonly parallel_tool_calls?: boolean | null | undefined;
  readonly text?:
    | {
        readonly format?: TextFormatBody | null | undefined;
        readonly verbosity?: string | null | undefined;
      }
    | null
    | undefined;
  readonly reasoning?:
    | {
        readonly effort?: string | null | undefined;
        readonly summary?: string | null | undefined;
        readonly [field: string]: unknown;
      }
    | null
    | undefined;
  readonly temperature?: number | null | undefined;
  readonly top_p?: number | null | undefined;
  readonly max_output_tokens?: number | null | undefined;
  readonly store?: boolean | null | undefined;
  readonly stream?: boolean | null | undefined;
  readonly previous_response_id?: string | null | undefined;
  readonly conversation?: string | { readonly id: string } | null | undefined;
  readonly metadata?: Readonly<Record<string, string>> | null | undefined;
  readonly user?: string | undefined;
  /** Extensions: whose conversation the chain is, and a conversation to continue. */
  readonly user_id?: string | undefined;
  readonly conversation_id?: string | undefined;
  readonly prompt?: unknown;
  readonly [field: string]: unknown;
}

/** What a response repeats of its request (OpenAI's `Response` carries them all). */
export interface ResponseEcho {
  readonly instructions: string | null;
  readonly max_output_tokens: number | null;
  readonly parallel_tool_calls: boolean;
  readonly previous_response_id: string | null;
  readonly reasoning: { effort: string | null; summary: string | null } | null;
  readonly store: boolean;
  readonly temperature: number | null;
  readonly text: { format: Record<string, unknown>; verbosity?: string };
  readonly tool_choice: ToolChoiceBody;
  readonly tools: Record<string, unknown>[];
  readonly top_p: number | null;
  readonly user?: string;
  readonly metadata: Record<string, string>;
}

/** An input item as `GET /v1/responses/{id}/input_items` lists it (OpenAI's item resources). */
export type InputItemResource = { readonly id: string; readonly type: string } & Record<
  string,
  unknown
>;

/**
 * The chat turn a request asks for, before the service adds a chain's history or a model (a
 * `TurnCall` of the chat module's turn handler).
 */
export interface ResponseCall {
  /** The instructions (a system turn) first, then the input's turns. */
  readonly messages: ChatTurn[];
  /** Per turn, the request field it was read from (`instructions`, `input[2]`). */
  readonly paths: string[];
  readonly params: ChatParams;
  readonly inputItems: InputItemResource[];
  readonly requestedModel: string | undefined;
  readonly maxTokens: number | undefined;
  readonly maxTokensParam: 'max_output_tokens';
  readonly temperature: number | undefined;
  readonly stream: boolean;
  /** `store` (default true): kept, and its chain continued, or stateless. */
  readonly persist: boolean;
  readonly previousResponseId: string | null;
  /** `conversation`: a stored conversation of the account to continue. */
  readonly conversationId: string | null;
  /** The extension `user_id`: whose conversation the chain is. */
  readonly userId: string | null;
  readonly echo: ResponseEcho;
}

/** A function's (and a JSON schema format's) name, as OpenAI allows it. */
export const functionName = /^[a-zA-Z0-9_-]{1,64}$/;

/** The text of a field that must be given and not empty (else a 400 naming it). */
export function requiredText(value: string | null | undefined, param: string): string {
  if (value === undefined || value === null || value === '') {
    throw new MissingParameterError(param);
  }
  return value;
}
