import type { OllamaError } from '#shared/api/ollama.js';
import type { ErrorShape } from '../../http/error-handler.js';

/** Ollama's error shape: the message alone (the status is the error table's). */
export const ollamaError: ErrorShape = (error): OllamaError => ({ error: error.message });
