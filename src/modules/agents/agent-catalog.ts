// The agent types (the spec's six, and ToolAgent), built with the services they need.
import { AppError } from '../../errors/app-error.js';
import { agentTypeIds, type AgentType } from './agent-type.js';

/**
 * Each type declares its own configuration shape; the catalog holds them side by side. The cast
 * is sound because a configuration only reaches `run` after validation against the type's schema.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type AnyAgentType = AgentType<any>;

export class AgentCatalog {
  private readonly byId: Map<string, AgentType>;

  constructor(types: readonly AnyAgentType[]) {
    this.byId = new Map(types.map((type) => [type.id, type as AgentType]));
    const missing = agentTypeIds.filter((id) => !this.byId.has(id));
    if (missing.length > 0) throw new Error(`agent types not registered: ${missing.join(', ')}`);
  }

  list(): AgentType[] {
    return agentTypeIds.map((id) => this.byId.get(id)!);
  }

  /** 400 naming `param` for a type that does not exist. */
  require(id: string, param = 'agent_type'): AgentType {
    const type = this.byId.get(id);
    if (type === undefined) {
      throw new AppError(
        'invalid_parameter',
        `Unknown agent type '${id}'. Agent types: ${agentTypeIds.join(', ')}.`,
        { param },
      );
    }
    return type;
  }
}
