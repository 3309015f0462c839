/** web-llm's prebuilt chat models, read from the installed package at build time (vite.config.ts). */
declare module 'virtual:webllm-models' {
  export interface WebLlmModel {
    /** Where its weights live (web-llm caches them under this URL). */
    model: string;
    model_id: string;
    vram_required_MB: number | null;
    required_features: string[];
  }
  /** web-llm's cache backend for these models ("cache": Cache Storage). */
  export const cacheBackend: string;
  const models: WebLlmModel[];
  export default models;
}
