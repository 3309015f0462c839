import { describe, expect, it } from 'vitest';
import { listenerText, ollamaChange, switchLabel } from '$lib/settings/ollama-listener';

const on = { enabled: true, port: 11434 };
const off = { enabled: false, port: 11434 };
const advice = 'run npm start';

describe("the Server screen's Ollama switch", () => {
  it('names the port in plain words and saves only its own setting', () => {
    expect(switchLabel(on)).toBe('Answer apps that expect Ollama (port 11434)');
    expect(ollamaChange(true)).toEqual({ version: 1, server: { ollama: { enabled: true } } });
  });

  it('says what is true now: answering, refused with the reason, or waiting for a restart', () => {
    expect(listenerText(on, { state: 'listening', url: 'http://127.0.0.1:11434' }, advice)).toBe('Answering as Ollama at http://127.0.0.1:11434.');
    expect(listenerText(on, { state: 'refused', problem: 'Port 11434 on 127.0.0.1 is already in use.' }, advice)).toBe(
      'Not answering as Ollama: Port 11434 on 127.0.0.1 is already in use.',
    );
    expect(listenerText(on, { state: 'off' }, advice)).toMatch(/^Turned on: .* once Hearth starts again: .*run npm start\.$/);
    expect(listenerText(off, { state: 'listening', url: 'http://127.0.0.1:11434' }, advice)).toMatch(/^Still answering as Ollama .* until Hearth starts again/);
    expect(listenerText(off, { state: 'off' }, advice)).toMatch(/^Off\./);
  });
});
