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

export const featureDescriptions: Record<FeatureName, string> = {
  voice_chat: 'Speech-to-text, text-to-speech and real-time voice sessions.',
  semantic_search: 'Knowledge bases searched by keyword and vector similarity.',
  agent_orchestration: 'Typed agents and pipelines of agents.',
  autonomous_routing: 'Intent classification and routing to agents, pipelines or models.',
  dynamic_layout_engine: 'Presentation layouts generated for responses.',
  policy_engine:
    'Declarative routing policies: route, forbid or require models and providers, cap max_tokens.',
  multi_model_access: 'Chat with models from several providers through one API.',
};
