// The feature catalog of the spec: seven capability names, and which of them this build implements.

export const featureNames = [
  'voice_chat',
  'semantic_search',
  'agent_orchestration',
  'autonomous_routing',
  'dynamic_layout_engine',
  'policy_engine',
  'multi_model_access',
] as const;

export type FeatureName = (typeof featureNames)[number];

/**
 * Capabilities this build can actually serve. A feature can only be reported `enabled` when it is
 * implemented; configuration may switch an implemented feature off, never an absent one on.
 */
export const implementedFeatures: ReadonlySet<FeatureName> = new Set<FeatureName>([
  'multi_model_access',
  'semantic_search',
  'agent_orchestration',
]);

export const featureDescriptions: Record<FeatureName, string> = {
  voice_chat: 'Speech-to-text, text-to-speech and real-time voice sessions.',
  semantic_search: 'Knowledge bases searched by keyword and vector similarity.',
  agent_orchestration: 'Typed agents and pipelines of agents.',
  autonomous_routing: 'Intent classification and routing to agents, pipelines or models.',
  dynamic_layout_engine: 'Presentation layouts generated for responses.',
  policy_engine: 'Policies applied to requests and responses.',
  multi_model_access: 'Chat with models from several providers through one API.',
};
