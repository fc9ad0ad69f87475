// Table shapes as Kysely sees them. Timestamps are ISO 8601 strings and JSON columns hold JSON text
// on both dialects; the dialect modules normalise what each driver returns to these shapes.
import type { ColumnType, Generated as _Generated } from 'kysely';
import type {
  ChunksTable,
  DocumentsTable,
  KnowledgeBasesTable,
  PendingDocumentsTable,
} from './schema-knowledge.js';
import type {
  BudgetReservationsTable,
  BudgetsTable,
  BudgetWindowsTable,
} from './schema-budgets.js';
import type { AuditChainsTable, AuditRecordsTable } from './schema-audit.js';
import type { SsoLoginStatesTable, SsoUsersTable } from './schema-sso.js';

/** Booleans are written as 1/0 (accepted by both dialects) and read back as number or boolean. */
export type BooleanColumn = ColumnType<number | boolean, number, number>;

export interface AccountsTable {
  id: string;
  name: string;
  kind: 'owner' | 'member';
  created_at: string;
  /** The rate-limit tier of the account's ceiling (null: none, the owner's account). */
  tier: string | null;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  display_key: string;
  /** JSON array of scope names. */
  scopes: string;
  tier: string;
  /** JSON array of CIDR ranges; empty means every address. */
  allowed_ips: string;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface ConversationsTable {
  id: string;
  account_id: string;
  user_id: string | null;
  title: string;
  description: string;
  model: string | null;
  system_prompt: string | null;
  status: 'active' | 'archived';
  /** JSON object. */
  metadata: string;
  template_name: string | null;
  /** JSON object of variable name → value, or null. */
  template_variables: string | null;
  message_count: number;
  created_at: string;
  updated_at: string;
}

export interface MessagesTable {
  id: string;
  conversation_id: string;
  account_id: string;
  /** Position in the conversation, from 1. */
  seq: number;
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** The text (the text parts joined when the content was parts). */
  content: string;
  model: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  latency_ms: number | null;
  finish_reason: string | null;
  created_at: string;
  /** The key whose request stored the message (null before usage was attributed). */
  api_key_id: string | null;
  /** JSON text: the content as OpenAI content parts, when it held more than text (migration 013). */
  parts: string | null;
  /** JSON text: an assistant turn's tool calls, in OpenAI's shape. */
  tool_calls: string | null;
  /** A tool turn: the id of the call it answers. */
  tool_call_id: string | null;
  /** OpenAI's optional participant name. */
  name: string | null;
}

export interface FeedbackTable {
  id: string;
  account_id: string;
  conversation_id: string;
  message_id: string;
  user_id: string;
  feedback_type: string;
  feedback_value: number;
  comment: string | null;
  created_at: string;
  updated_at: string;
}

export interface AgentsTable {
  id: string;
  account_id: string;
  name: string;
  description: string;
  agent_type: string;
  model_id: string | null;
  is_public: BooleanColumn;
  /** A tool of POST /mcp for the account's keys (migration 015). */
  expose_as_tool: ColumnType<number | boolean, number | undefined, number>;
  /** JSON object, validated against the agent type's configuration schema. */
  configuration: string;
  created_at: string;
  updated_at: string;
}

export interface ExecutionsTable {
  id: string;
  account_id: string;
  kind: 'agent' | 'pipeline';
  agent_id: string | null;
  pipeline_id: string | null;
  conversation_id: string | null;
  /** The `user_id` the run was made for (migration 006). */
  user_id: string | null;
  status: 'running' | 'waiting_for_approval' | 'completed' | 'failed';
  /** JSON documents. */
  input: string;
  output: string | null;
  error: string | null;
  tokens_used: number;
  execution_time_ms: number | null;
  created_at: string;
  completed_at: string | null;
  /** The instance running it (for recovering runs a stopped instance left running). */
  instance_id: string | null;
  /** The key whose request started the run (null before usage was attributed). */
  api_key_id: string | null;
  /**
   * JSON: the plan of a run carried by the job queue (migration 010), which any instance can
   * resume; null for runs tied to their request (a stopped instance's are failed, not resumed).
   */
  run_plan: string | null;
}

export interface SessionsTable {
  id: string;
  /** SHA-256 of the cookie's token; the token itself is never stored. */
  token_hash: string;
  account_id: string;
  api_key_id: string;
  client_address: string;
  user_agent: string;
  created_at: string;
  last_seen_at: string;
  /** The absolute end; the idle end is `last_seen_at` plus the configured idle timeout. */
  expires_at: string;
}

export interface PipelinesTable {
  id: string;
  account_id: string;
  name: string;
  description: string;
  /** JSON array of stages ({id, name, agent_id, input_mapping, output_mapping, …}). */
  stages: string;
  /** JSON {nodes, edges}, or null when the layout is generated from the stages. */
  visual_layout: string | null;
  created_at: string;
  updated_at: string;
  /** A tool of POST /mcp for the account's keys (migration 015). */
  expose_as_tool: ColumnType<number | boolean, number | undefined, number>;
  /** JSON Schema (text) of the run's inputs, the tool's inputSchema; null: any object (015). */
  input_schema: string | null;
}

/** A model turn or tool call of a tool-calling agent's run (migration 016). */
export interface ExecutionStepsTable {
  id: string;
  execution_id: string;
  stage_record_id: string | null;
  position: number;
  kind: 'model' | 'tool';
  name: string;
  call_id: string | null;
  /** JSON documents. */
  arguments: string | null;
  output: string | null;
  status:
    | 'running'
    | 'completed'
    | 'failed'
    | 'waiting_for_approval'
    | 'interrupted'
    | 'approved'
    | 'rejected';
  error: string | null;
  decision: string | null;
  tokens_used: number;
  duration_ms: number | null;
  started_at: string;
  completed_at: string | null;
  expires_at: string | null;
  /** The tool's input schema while a call waits for a decision (migration 017), JSON. */
  tool_schema: string | null;
}

export interface ExecutionStagesTable {
  id: string;
  execution_id: string;
  position: number;
  stage_id: string;
  name: string;
  agent_id: string;
  status: 'pending' | 'running' | 'waiting_for_approval' | 'completed' | 'failed' | 'skipped';
  attempts: number;
  input: string | null;
  output: string | null;
  error: string | null;
  tokens_used: number;
  execution_time_ms: number | null;
  started_at: string | null;
  completed_at: string | null;
}

export interface InstancesTable {
  id: string;
  started_at: string;
  heartbeat_at: string;
}

export interface RoutingIntentsTable {
  id: string;
  account_id: string;
  conversation_id: string | null;
  text: string;
  category: string;
  confidence: number;
  complexity: string;
  /** JSON object: detected entities, complexity signals, classification method. */
  metadata: string;
  route_type: string | null;
  route_ref: string | null;
  route_name: string | null;
  created_at: string;
}

export interface RoutingStateTable {
  account_id: string;
  /** Grows with every change to the account's examples or policies. */
  version: number;
  /** The `seq` of the account's newest example. */
  example_seq: number;
  updated_at: string;
}

export interface RouteExamplesTable {
  id: string;
  account_id: string;
  seq: number;
  message: string;
  message_key: string;
  route_type: string;
  route_ref: string;
  route_name: string;
  conversation_id: string | null;
  embedding: string | null;
  embedding_model: string | null;
  created_at: string;
}

export interface RoutingPoliciesTable {
  id: string;
  account_id: string;
  name: string;
  description: string;
  priority: number;
  enabled: BooleanColumn;
  /** JSON documents, validated by the routing policy schema. */
  conditions: string;
  actions: string;
  created_at: string;
  updated_at: string;
}

export interface VoiceSessionsTable {
  id: string;
  account_id: string;
  /** The key that created the session: its revocation ends the session. */
  key_id: string;
  user_id: string;
  /** Null until the first turn creates the conversation. */
  conversation_id: string | null;
  model: string;
  stt_model: string;
  tts_model: string;
  voice_id: string;
  language_code: string | null;
  sample_rate: number;
  audio_format: string;
  /** SHA-256 of the connection token; null once the token was used. */
  token_hash: string | null;
  token_expires_at: string;
  expires_at: string;
  connected_at: string | null;
  created_at: string;
}

/** A stored response of the Responses API (migration 014). */
export interface ResponsesTable {
  id: string;
  account_id: string;
  conversation_id: string;
  /** The stored assistant message that is the response's answer. */
  message_id: string;
  previous_response_id: string | null;
  model: string;
  status: string;
  created_at: string;
  /** JSON text: the Response object as it was returned. */
  body: string;
  /** JSON text: the input items, with their ids. */
  input_items: string;
}

/** One model call (migration 019). Counts are bigint columns: PostgreSQL answers them as text. */
export interface UsageRecordsTable {
  id: string;
  account_id: string;
  api_key_id: string | null;
  end_user: string | null;
  route: string;
  model: string;
  provider: string;
  deployment: string | null;
  execution_id: string | null;
  input_tokens: number | string;
  output_tokens: number | string;
  cached_input_tokens: number | string;
  cache_write_tokens: number | string;
  reasoning_tokens: number | string;
  audio_ms: number | string;
  characters: number | string;
  status: 'ok' | 'error' | 'aborted';
  error_code: string | null;
  latency_ms: number;
  cache_hit: number | boolean;
  cost_micros: number | string | null;
  created_at: string;
}

export interface DatabaseSchema {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  feedback: FeedbackTable;
  agents: AgentsTable;
  executions: ExecutionsTable;
  knowledge_bases: KnowledgeBasesTable;
  documents: DocumentsTable;
  chunks: ChunksTable;
  pending_documents: PendingDocumentsTable;
  pipelines: PipelinesTable;
  execution_stages: ExecutionStagesTable;
  execution_steps: ExecutionStepsTable;
  instances: InstancesTable;
  sessions: SessionsTable;
  routing_intents: RoutingIntentsTable;
  routing_state: RoutingStateTable;
  route_examples: RouteExamplesTable;
  routing_policies: RoutingPoliciesTable;
  voice_sessions: VoiceSessionsTable;
  responses: ResponsesTable;
  usage_records: UsageRecordsTable;
  budgets: BudgetsTable;
  budget_windows: BudgetWindowsTable;
  budget_reservations: BudgetReservationsTable;
  audit_records: AuditRecordsTable;
  audit_chains: AuditChainsTable;
  sso_users: SsoUsersTable;
  sso_login_states: SsoLoginStatesTable;
}
