import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import { withMediaMarkers } from './media.js';
import type { HistoryItem, ToolSpec } from './types.js';

/**
 * Converts protocol-neutral history into node-llama-cpp's chat history. Tool results are folded
 * into the assistant turn that called them, which is how the chat wrappers render them (with the
 * media marker at each image of a result, as in a user message). An
 * assistant turn's `reasoning` becomes a thought segment when the format has one (`thoughts`):
 * the wrapper then renders it as its template does (most drop earlier turns' thoughts); else it is
 * dropped.
 */
export function toChatHistory(history: HistoryItem[], param: string, options: { thoughts?: boolean; mediaMarker?: string } = {}): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = [];
  const pendingCalls = new Map<string, ChatModelFunctionCall>();
  history.forEach((item, index) => {
    switch (item.role) {
      case 'system':
        items.push({ type: 'system', text: item.text });
        break;
      case 'user':
        items.push({ type: 'user', text: withMediaMarkers(item, options.mediaMarker) });
        break;
      case 'assistant': {
        const response: ChatModelResponse['response'] = [];
        if (options.thoughts && item.reasoning) response.push({ type: 'segment', segmentType: 'thought', text: item.reasoning, ended: true });
        if (item.text) response.push(item.text);
        for (const call of item.toolCalls) {
          const functionCall: ChatModelFunctionCall = { type: 'functionCall', name: call.name, params: parseArguments(call.arguments), result: '' };
          pendingCalls.set(call.id, functionCall);
          response.push(functionCall);
        }
        items.push({ type: 'model', response });
        break;
      }
      case 'tool': {
        const call = pendingCalls.get(item.callId);
        if (!call) {
          throw new HearthError(
            'invalid_request_error',
            `${param}[${index}] is a tool result for "${item.callId}", but no earlier assistant turn has a tool call with that id.`,
            { param: `${param}[${index}]` },
          );
        }
        // Its images at their places in the output, as a user message's (the wrapper writes the result as JSON text; the marker survives it).
        call.result = withMediaMarkers({ text: item.output, media: item.media }, options.mediaMarker);
        pendingCalls.delete(item.callId);
        break;
      }
    }
  });
  return items;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** System text that tells a model which tools exist when a grammar forces it to call one. */
export function describeTools(tools: ToolSpec[]): string {
  const lines = tools.map(
    (tool) => `- ${tool.name}${tool.description ? `: ${tool.description}` : ''}\n  parameters: ${JSON.stringify(tool.parameters ?? { type: 'object' })}`,
  );
  return `You must call one of these tools. Answer only with JSON {"name": <tool name>, "arguments": <object>}.\n${lines.join('\n')}`;
}
