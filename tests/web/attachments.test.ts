import { describe, expect, it } from 'vitest';
import { fitWithin, imageRefusal, MAX_SIDE, storedType, withPlaceholders } from '$lib/chat/attachments';
import { fitConversation, IMAGE_TOKENS, messageTokens } from '$lib/chat/context';
import type { ModelRecord } from '#shared/api/openai.js';
import { agentRecord } from '../helpers/agent-records.js';

const model = (id: string, capabilities: ModelRecord['capabilities'], extra: Partial<ModelRecord> = {}): ModelRecord => ({
  id,
  object: 'model',
  created: 0,
  owned_by: 'local',
  source: 'local',
  capabilities,
  ...extra,
});
const textOnly = model('tiny', ['chat', 'tools']);
const seeing = model('tiny-vision', ['chat', 'tools', 'vision']);
const atProvider = model('cloud/gpt', undefined, { source: 'provider', owned_by: 'cloud' });

describe('fitWithin', () => {
  it('keeps an image within the longest side as it is', () => {
    expect(fitWithin(2048, 1000)).toEqual({ width: 2048, height: 1000, scaled: false });
    expect(fitWithin(8, 8)).toEqual({ width: 8, height: 8, scaled: false });
  });

  it('scales a larger one down to MAX_SIDE on its longest side, keeping its shape', () => {
    expect(MAX_SIDE).toBe(2048);
    expect(fitWithin(4000, 3000)).toEqual({ width: 2048, height: 1536, scaled: true });
    expect(fitWithin(1000, 6000)).toEqual({ width: 341, height: 2048, scaled: true });
    // A thin strip keeps at least a pixel.
    expect(fitWithin(100_000, 1)).toEqual({ width: 2048, height: 1, scaled: true });
  });
});

describe('storedType', () => {
  it('keeps JPEG for a photo and PNG for everything else', () => {
    expect(storedType('image/jpeg')).toBe('image/jpeg');
    expect(storedType('image/png')).toBe('image/png');
    expect(storedType('image/webp')).toBe('image/png');
    expect(storedType('image/gif')).toBe('image/png');
  });
});

describe('withPlaceholders', () => {
  it('puts an [image] before the text for each image, and leaves a message without images alone', () => {
    expect(withPlaceholders('What is this?', 0)).toBe('What is this?');
    expect(withPlaceholders('What is this?', 2)).toBe('[image] [image]\nWhat is this?');
    expect(withPlaceholders('', 1)).toBe('[image]');
  });
});

describe('image tokens in the context estimate', () => {
  it('counts each image of a message', () => {
    const plain = messageTokens({ content: 'hello' }, 0.5);
    expect(messageTokens({ content: 'hello', images: 2 }, 0.5)).toBe(plain + 2 * IMAGE_TOKENS);
  });

  it('leaves out an older question with an image before the newest turns', () => {
    const messages = [
      { id: 'u1', role: 'user' as const, content: 'look', images: 1 },
      { id: 'a1', role: 'assistant' as const, content: 'a picture' },
      { id: 'u2', role: 'user' as const, content: 'and now?' },
    ];
    const fit = fitConversation({ messages, fixedTokens: 0, budget: IMAGE_TOKENS, policy: 'rolling-window', tokensPerChar: 0.5 });
    expect(fit.omitted).toEqual(['u1', 'a1']);
  });
});

describe('imageRefusal', () => {
  const list = [textOnly, seeing, atProvider];

  it('lets a local model with a projector, and a provider model, take images', () => {
    expect(imageRefusal('companion:tiny-vision', list, 'tiny-vision')).toBeNull();
    expect(imageRefusal('companion:cloud/gpt', list, 'cloud/gpt')).toBeNull();
  });

  it('says why a text-only model cannot, and names an installed model that can', () => {
    const refusal = imageRefusal('companion:tiny', list, 'tiny');
    expect(refusal?.message).toMatch(/^tiny cannot read images: it has no vision projector/);
    expect(refusal?.message).toContain('Switch to tiny-vision, which reads images, or remove the images');
    expect(refusal?.alternative).toEqual({ key: 'companion:tiny-vision', label: 'tiny-vision' });
  });

  it('refuses models in the browser the same way', () => {
    expect(imageRefusal('wllama:tiny.gguf', list, 'tiny')?.message).toMatch(
      /^tiny runs in this browser, and models in the browser read text only\. Switch to tiny-vision/,
    );
    expect(imageRefusal('webllm:Llama-3.2-1B', list, 'Llama')?.alternative?.key).toBe('companion:tiny-vision');
  });

  it('says how to get a model that reads images when none is installed', () => {
    const refusal = imageRefusal('companion:tiny', [textOnly], 'tiny');
    expect(refusal?.alternative).toBeNull();
    expect(refusal?.message).toContain('No installed model reads images: install a vision model with its projector (an mmproj-*.gguf file beside the model');
    // A vision model that cannot load is no way out.
    expect(imageRefusal('companion:tiny', [textOnly, { ...seeing, error: 'damaged' }], 'tiny')?.alternative).toBeNull();
  });

  it('refuses a model the companion does not list', () => {
    expect(imageRefusal('companion:gone', list, 'gone')?.message).toMatch(/^gone is not in the companion's list of models/);
  });
});

describe('imageRefusal for an agent', () => {
  const list = [textOnly, seeing, atProvider];
  const helper = (extra: Parameters<typeof agentRecord>[0]) => [agentRecord(extra)];

  it('lets an agent of this machine whose model reads images take them: a model with a projector, or a provider model', () => {
    expect(imageRefusal('agent:helper', list, 'Helper', helper({ model: 'tiny-vision' }))).toBeNull();
    expect(imageRefusal('agent:helper', list, 'Helper', helper({ model: 'cloud/gpt' }))).toBeNull();
  });

  it('names the agent and its model when the model cannot read them, and offers giving it one, or a model that does', () => {
    const refusal = imageRefusal('agent:helper', list, 'Helper', helper({ model: 'tiny' }));
    expect(refusal).toEqual({
      message:
        'Helper runs on tiny, which cannot read images: it has no vision projector (an mmproj file beside the model). Give Helper a model that reads images on the Agents page, switch to tiny-vision, which reads images, or remove the images to send the text.',
      alternative: { key: 'companion:tiny-vision', label: 'tiny-vision' },
    });
    expect(imageRefusal('agent:helper', [textOnly], 'Helper', helper({ model: 'tiny' }))).toEqual({
      message: expect.stringMatching(
        /^Helper runs on tiny, which cannot read images: .* No installed model reads images: install a vision model .* from the Models page and give it to Helper on the Agents page, or remove the images/,
      ),
      alternative: null,
    });
    expect(imageRefusal('agent:helper', list, 'Helper', helper({ model: 'gone' }))?.message).toMatch(
      /^Helper runs on gone, which is not in the companion's list of models, so Hearth cannot tell whether it reads images\. Give Helper/,
    );
    expect(imageRefusal('agent:helper', list, 'Helper', helper({ model: null }))?.message).toMatch(
      /^Helper has no model set, so nothing would read the images\. Give Helper/,
    );
  });

  it('refuses an agent it cannot see the model of: not listed, on a paired host, or in a cloud workspace', () => {
    expect(imageRefusal('agent:helper', list, 'Helper')?.message).toMatch(
      /^Helper is not in the companion's list of agents, so Hearth cannot tell whether its model reads images\. Switch to tiny-vision/,
    );
    // A paired host's model that happens to share a name with a local one says nothing about it.
    expect(imageRefusal('agent:helper', list, 'Helper', helper({ source: 'remote', model: 'tiny-vision' }))?.message).toMatch(
      /^Helper runs on a paired host, whose models this app cannot see/,
    );
    expect(imageRefusal('agent:helper', list, 'Helper', helper({ source: 'cloud', model: null }))?.message).toMatch(
      /^Helper runs in a cloud workspace, which is sent the text of a message only\. Switch to tiny-vision/,
    );
  });
});
