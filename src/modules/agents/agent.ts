// An agent as the domain sees it: a configured instance of an agent type, owned by one account.

export interface Agent {
  id: string;
  accountId: string;
  name: string;
  description: string;
  agentType: string;
  modelId: string | null;
  isPublic: boolean;
  /** A tool of POST /mcp for its own account's keys. */
  exposeAsTool: boolean;
  configuration: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface AgentPatch {
  name?: string;
  description?: string;
  modelId?: string | null;
  isPublic?: boolean;
  exposeAsTool?: boolean;
  configuration?: Record<string, unknown>;
}
