/** Reads a LoCoMo file and turns it into ingestion requests as bench/README.md describes. */
import { readFileSync } from 'node:fs';
import type { MemoryIngestRequest } from '#shared/api/memory.js';

interface Turn {
  speaker: string;
  text: string;
  blip_caption?: string;
}

export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: string; category: number }[];
}

export function readLocomo(file: string): Sample[] {
  return JSON.parse(readFileSync(file, 'utf8')) as Sample[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00". */
export function isoSessionDate(text: string): string {
  const match = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  if (!match) throw new Error(`Unrecognised LoCoMo session date: ${text}`);
  const [, hour, minute, half, day, month, year] = match;
  const hours = (Number(hour) % 12) + (half!.toLowerCase() === 'pm' ? 12 : 0);
  const monthIndex = MONTHS.indexOf(month!.toLowerCase());
  if (monthIndex < 0) throw new Error(`Unrecognised month in ${text}`);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${year}-${pad(monthIndex + 1)}-${pad(Number(day))}T${pad(hours)}:${minute}:00`;
}

export const agentOf = (sample: Sample) => `locomo-${sample.sample_id}`;

const side = (turn: Turn) => `${turn.speaker}: ${turn.text}${turn.blip_caption ? ` [shares ${turn.blip_caption}]` : ''}`;

/** One ingestion request per session, turns in consecutive pairs; an odd last turn has assistant "". */
export function sessionRequests(sample: Sample, skipExtraction: boolean): MemoryIngestRequest[] {
  const sessions = Object.keys(sample.conversation)
    .map((key) => /^session_(\d+)$/.exec(key))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]))
    .sort((a, b) => a - b);
  return sessions.map((number) => {
    const turns = sample.conversation[`session_${number}`] as Turn[];
    const pairs = [];
    for (let index = 0; index < turns.length; index += 2) {
      pairs.push({ user: side(turns[index]!), assistant: turns[index + 1] ? side(turns[index + 1]!) : '' });
    }
    return {
      agent_id: agentOf(sample),
      conversation_id: `${sample.sample_id}_session_${number}`,
      session_date: isoSessionDate(sample.conversation[`session_${number}_date_time`] as string),
      turns: pairs,
      skip_extraction: skipExtraction,
    };
  });
}

/** Every turn text of the file, for building large synthetic transcripts. */
export function allTurnTexts(samples: Sample[]): string[] {
  return samples.flatMap((sample) => sessionRequests(sample, true).flatMap((request) => request.turns.flatMap((turn) => [turn.user, turn.assistant ?? ''])));
}
