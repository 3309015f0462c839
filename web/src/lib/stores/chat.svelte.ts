import { listModels, streamChat } from '$lib/api/client';
import type { FinishReason, ModelRecord, Usage } from '$shared/api/openai';

export interface Message {
  role: 'user' | 'assistant';
  content: string;
  usage?: Usage | null;
  finishReason?: FinishReason | null;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A model can chat unless it says otherwise. */
const chats = (model: ModelRecord) => !model.capabilities || model.capabilities.includes('chat');

export class ChatStore {
  models = $state<ModelRecord[]>([]);
  model = $state('');
  messages = $state<Message[]>([]);
  streaming = $state(false);
  error = $state<string | null>(null);
  #controller: AbortController | null = null;

  chatModels = $derived(this.models.filter(chats));

  async loadModels(): Promise<void> {
    try {
      this.models = await listModels();
      if (!this.chatModels.some((model) => model.id === this.model)) this.model = this.chatModels[0]?.id ?? '';
    } catch (error) {
      this.error = message(error);
    }
  }

  async send(text: string): Promise<void> {
    const content = text.trim();
    if (!content || !this.model || this.streaming) return;
    const history = [...this.messages, { role: 'user' as const, content }].map(({ role, content }) => ({ role, content }));
    this.messages.push({ role: 'user', content }, { role: 'assistant', content: '' });
    const reply = this.messages[this.messages.length - 1];
    const controller = new AbortController();
    this.#controller = controller;
    this.error = null;
    this.streaming = true;
    try {
      const result = await streamChat({
        model: this.model,
        messages: history,
        signal: controller.signal,
        onDelta: (delta) => {
          reply.content += delta;
        },
      });
      reply.usage = result.usage;
      reply.finishReason = result.finishReason;
    } catch (error) {
      if (!controller.signal.aborted) this.error = message(error);
      if (reply.content === '') this.messages.pop();
    } finally {
      this.streaming = false;
      this.#controller = null;
    }
  }

  stop(): void {
    this.#controller?.abort();
  }
}

export const chat = new ChatStore();
