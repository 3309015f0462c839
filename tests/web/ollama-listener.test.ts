import { describe, expect, it } from 'vitest';
import { listenerText, ollamaChange, switchLabel, waitsForRestart } from '$lib/settings/ollama-listener';

const on = { enabled: true, port: 11434 };
const off = { enabled: false, port: 11434 };

describe("the Server screen's Ollama switch", () => {
  it('names the port in plain words and saves only its own setting', () => {
    expect(switchLabel(on)).toBe('Answer apps that expect Ollama (port 11434)');
    expect(ollamaChange(true)).toEqual({ version: 1, server: { ollama: { enabled: true } } });
  });

  it('says what is true now: answering, refused with the reason, or waiting for a restart', () => {
    expect(listenerText(on, { state: 'listening', url: 'http://127.0.0.1:11434' })).toBe('Answering as Ollama at http://127.0.0.1:11434.');
    expect(listenerText(on, { state: 'refused', problem: 'Port 11434 on 127.0.0.1 is already in use.' })).toBe(
      'Not answering as Ollama: Port 11434 on 127.0.0.1 is already in use.',
    );
    expect(listenerText(on, { state: 'off' })).toBe('Turned on: apps that expect Ollama are answered once Hearth restarts.');
    expect(listenerText(off, { state: 'listening', url: 'http://127.0.0.1:11434' })).toBe(
      'Turned off, but still answering as Ollama at http://127.0.0.1:11434 until Hearth restarts.',
    );
    expect(listenerText(off, { state: 'off' })).toMatch(/^Off\./);
  });

  it('waits for a restart only while the saved setting and the listener differ', () => {
    expect(waitsForRestart(on, { state: 'off' })).toBe(true);
    expect(waitsForRestart(off, { state: 'listening' })).toBe(true);
    expect(waitsForRestart(on, { state: 'listening' })).toBe(false);
    expect(waitsForRestart(off, { state: 'off' })).toBe(false);
    // Refused (its port taken): a restart is not what it waits for.
    expect(waitsForRestart(on, { state: 'refused', problem: 'taken' })).toBe(false);
  });
});
