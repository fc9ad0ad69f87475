// Pipelines as the domain sees them: ordered stages, each bound to an agent, and a visual layout.

export interface PipelineStage {
  id: string;
  name: string;
  agent_id: string;
  input_mapping: Record<string, string>;
  output_mapping: Record<string, string>;
  timeout_ms?: number;
  retries?: number;
}

/** A node of the layout, as stored: always with `position` (React Flow's shape). */
export interface LayoutNode {
  id: string;
  position: { x: number; y: number; [extra: string]: unknown };
  type?: string;
  data?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface LayoutEdge {
  id: string;
  source: string;
  target: string;
  [extra: string]: unknown;
}

/** React Flow's shape; other fields (type, style, viewport, …) are kept as given. */
export interface VisualLayout {
  nodes: LayoutNode[];
  edges: LayoutEdge[];
  [extra: string]: unknown;
}

export interface Pipeline {
  id: string;
  accountId: string;
  name: string;
  description: string;
  stages: PipelineStage[];
  /** As given by the client (normalised); null when none was (a layout is generated on read). */
  visualLayout: VisualLayout | null;
  /** A tool of POST /mcp for its account's keys. */
  exposeAsTool: boolean;
  /** The JSON Schema of its run inputs (the tool's inputSchema); null: any object. */
  inputSchema: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

/** A pipeline that names an agent in one of its stages. */
export interface PipelineReference {
  id: string;
  accountId: string;
  name: string;
}
