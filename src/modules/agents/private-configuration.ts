// Which keys of an agent's configuration are its owner's private business: another account may
// read and execute a public agent, but its detail does not show these.
import type { AgentTypeId } from './agent-type.js';

/**
 * Per type (a new type must decide): `knowledge_base_ids` names the owner's knowledge bases, and
 * `instructions` is the owner's own prompt text, which often carries internal context.
 */
const privateKeysByType: Record<AgentTypeId, readonly string[]> = {
  RetrievalAgent: ['knowledge_base_ids', 'instructions'],
  SummarizationAgent: ['instructions'],
  ReasoningAgent: ['instructions'],
  GenerationAgent: ['instructions'],
  WebAgent: [],
  StructureAgent: [],
  // Its tools name servers, documents and the owner's objects (a ToolAgent is never public anyway).
  ToolAgent: ['instructions', 'tools'],
};

/** Any key that names a secret is private, whatever the type (none of today's types has one). */
const secretBearing = /secret|token|password|passphrase|credential|api[_-]?key|private[_-]?key/i;

export function isPrivateConfigurationKey(agentType: string, key: string): boolean {
  const byType = (privateKeysByType as Record<string, readonly string[] | undefined>)[agentType];
  return byType?.includes(key) === true || secretBearing.test(key);
}

/** The configuration another account sees, and the keys left out of it. */
export function sharedConfiguration(
  agentType: string,
  configuration: Record<string, unknown>,
): { configuration: Record<string, unknown>; hidden: string[] } {
  const shown: Record<string, unknown> = {};
  const hidden: string[] = [];
  for (const [key, value] of Object.entries(configuration)) {
    if (isPrivateConfigurationKey(agentType, key)) hidden.push(key);
    else shown[key] = value;
  }
  return { configuration: shown, hidden };
}
