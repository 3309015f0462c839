/** Wire types of the agents family. */
export interface AgentRecord {
  id: string;
  object: 'agent';
  name: string;
  model: string | null;
  tools: string[];
}

export interface AgentList {
  object: 'list';
  data: AgentRecord[];
}
