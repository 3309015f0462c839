import { describe, expect, it } from 'vitest';
import { summarize } from '../../../companion/src/models/gguf-metadata.js';

const chat = { 'general.architecture': 'qwen2', 'qwen2.context_length': 32768, 'tokenizer.chat_template': '{{ messages }}' };

describe('capabilities from a GGUF header', () => {
  it('gives every chat model raw completions and tools, and nothing it has no mark of', () => {
    expect(summarize(chat).capabilities).toEqual(['chat', 'completion', 'tools']);
  });

  it('reads fill-in-the-middle from the three FIM token ids, under their new or their old names', () => {
    const ids = { 'tokenizer.ggml.fim_pre_token_id': 151659, 'tokenizer.ggml.fim_suf_token_id': 151661, 'tokenizer.ggml.fim_mid_token_id': 151660 };
    expect(summarize({ ...chat, ...ids }).capabilities).toEqual(['chat', 'completion', 'fim', 'tools']);
    const old = { 'tokenizer.ggml.prefix_token_id': 32007, 'tokenizer.ggml.suffix_token_id': 32008, 'tokenizer.ggml.middle_token_id': 32009 };
    expect(summarize({ ...chat, ...old }).capabilities).toContain('fim');
    // Two of three are no fill-in-the-middle: the middle token ends the prompt.
    expect(summarize({ ...chat, 'tokenizer.ggml.fim_pre_token_id': 1, 'tokenizer.ggml.fim_suf_token_id': 2 }).capabilities).not.toContain('fim');
  });

  it('reads reasoning from a chat template with a thought segment', () => {
    expect(summarize({ ...chat, 'tokenizer.chat_template': "{{ '<think>\\n' }}" }).capabilities).toEqual(['chat', 'completion', 'tools', 'reasoning']);
    expect(summarize({ ...chat, 'tokenizer.chat_template': '{% if enable_thinking %}{% endif %}' }).capabilities).toContain('reasoning');
  });

  it('leaves an embedding model with embeddings only', () => {
    const embedding = { 'general.architecture': 'bert', 'bert.pooling_type': 1, 'tokenizer.ggml.fim_pre_token_id': 1 };
    expect(summarize(embedding).capabilities).toEqual(['embedding']);
  });
});
