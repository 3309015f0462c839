/**
 * POST /v1/audio/transcriptions, OpenAI's multipart shape. A local model transcribes as
 * llama-server and Ollama do it: one chat turn on the generation path, the sound and an
 * instruction in one user message. A provider's model gets the form at its own
 * /audio/transcriptions, as it came (with the provider's name for the model).
 */
import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TRANSCRIPTION_FORMATS, type Transcription, type TranscriptionFields, type TranscriptionFormat } from '#shared/api/audio.js';
import { HearthError } from '../../errors.js';
import { resolveGenerator } from '../../generation/generate.js';
import { clientGone } from '../../http/sse.js';
import type { GenerationRequest, GenerationResult } from '../../inference/types.js';
import type { LocalModel } from '../../models/registry.js';
import { readAnswer } from '../../providers/read-body.js';
import type { OpenaiContext } from '../contexts.js';
import { atMost, readForm, type Form } from '../multipart.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { audioFormatOf } from './media-parts.js';

/** The text fields of the form (the sound is the file field `file`). */
export const transcriptionBody = {
  type: 'object',
  required: ['model'],
  additionalProperties: false,
  properties: {
    model: nonEmptyString(),
    language: { type: 'string', maxLength: 16 },
    prompt: { type: 'string', maxLength: 8000 },
    // Any text: a format Hearth cannot give is refused below, with the ones it can.
    response_format: { type: 'string' },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
  },
} as const satisfies BodySchema<TranscriptionFields>;

type Context = Pick<OpenaiContext, 'config' | 'generation' | 'shutdown'>;

function refuse(param: string, message: string): never {
  throw new HearthError('invalid_request_error', message, { param });
}

/** Formats a client may send by mistake, by their first bytes, for a refusal that names what was sent. */
const OTHER_FORMATS: [string, (bytes: Buffer) => boolean][] = [
  ['a WebM or Matroska recording', (bytes) => bytes.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))],
  ['an Ogg file (Opus or Vorbis)', (bytes) => bytes.subarray(0, 4).toString('latin1') === 'OggS'],
  ['a FLAC file', (bytes) => bytes.subarray(0, 4).toString('latin1') === 'fLaC'],
  ['an MP4 or M4A file', (bytes) => bytes.subarray(4, 8).toString('latin1') === 'ftyp'],
  ['an AIFF file', (bytes) => bytes.subarray(0, 4).toString('latin1') === 'FORM'],
];

interface Sound {
  data: Buffer;
  /** The name the client gave the file. */
  name: string;
}

/** The form's one file, which must be there and not empty. */
function fileOf(form: Form<TranscriptionFields>): Sound {
  const data = form.files.get('file')?.[0];
  const name = form.names.get('file')?.[0] || 'speech.wav';
  if (!data) refuse('file', 'file is required: send the sound to transcribe (WAV or MP3) as the multipart file field "file".');
  if (data.length === 0) refuse('file', `file (${name}) is empty: send the recording's bytes.`);
  return { data, name };
}

/** The sound's media type for a local model: WAV or MP3; anything else is a 400 that says what it is and what to do. */
function localFormat(sound: Sound): string {
  const known = audioFormatOf(sound.data);
  if (known) return known.mime;
  const other = OTHER_FORMATS.find(([, test]) => test(sound.data))?.[0] ?? 'neither WAV nor MP3';
  const wav = sound.name.replace(/\.[^./]*$/, '') + '.wav';
  refuse(
    'file',
    `file (${sound.name}) is ${other}; local models here read WAV or MP3 only. Convert it first (for example: ffmpeg -i ${sound.name} -ar 16000 -ac 1 ${wav === sound.name ? 'speech.wav' : wav}) and send that.`,
  );
}

function formatOf(fields: TranscriptionFields): TranscriptionFormat {
  const format = fields.response_format ?? 'json';
  if ((TRANSCRIPTION_FORMATS as readonly string[]).includes(format)) return format as TranscriptionFormat;
  const timed = ['verbose_json', 'srt', 'vtt'].includes(format)
    ? ' Timestamps (verbose_json, srt, vtt) need a speech engine that reports them; a chat model does not.'
    : '';
  refuse(
    'response_format',
    `response_format "${format}" is not supported here: send json (the default, {"text": ...}) or text (the transcript alone).${timed}`,
  );
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** The language's name in English (`de` is German), from an ISO-639-1 code (`pt-BR` is read as `pt`). */
function languageOf(fields: TranscriptionFields): string | undefined {
  const code = fields.language?.trim();
  if (!code) return undefined;
  const name = /^[a-z]{2}(?:[-_][a-z0-9]{2,8})?$/i.test(code) ? languageNames.of(code.slice(0, 2).toLowerCase()) : undefined;
  if (!name) refuse('language', `language "${code}" is not an ISO-639-1 code: send two letters, such as en, de or fr.`);
  return name;
}

/** How long a WAV file lasts (its data chunk's bytes over its byte rate), or undefined when its chunks do not say. */
export function wavSeconds(bytes: Buffer): number | undefined {
  let byteRate: number | undefined;
  for (let at = 12; at + 8 <= bytes.length; at += 8 + bytes.readUInt32LE(at + 4) + (bytes.readUInt32LE(at + 4) % 2)) {
    const id = bytes.subarray(at, at + 4).toString('latin1');
    if (id === 'fmt ' && at + 20 <= bytes.length) byteRate = bytes.readUInt32LE(at + 16);
    if (id === 'data') return byteRate ? bytes.readUInt32LE(at + 4) / byteRate : undefined;
  }
  return undefined;
}

/** Tokens a transcript may take for each second of a WAV sound (fast speech is about 4), and a floor: a model that repeats itself stops there. */
const TOKENS_PER_SECOND = 10;
const MIN_TRANSCRIPT_TOKENS = 64;

/** What the model is asked, after the sound. */
export function transcriptionInstruction(language: string | undefined, context: string | undefined): string {
  return [
    'Transcribe this audio word for word.',
    language ? `The speech is in ${language}: write it in ${language}.` : '',
    context?.trim() ? `Context (earlier words, the spelling of names): ${context.trim()}` : '',
    'Answer with the transcript only, without comments.',
  ]
    .filter(Boolean)
    .join(' ');
}

export const transcriptionRoutes: RoutePlugin<OpenaiContext, keyof Context> = async (app, context) => {
  // Multipart bodies are read in this route's scope only.
  await app.register(multipart, { throwFileSizeLimit: true });
  app.post('/v1/audio/transcriptions', async (request, reply) => {
    const form = await readForm<TranscriptionFields>(request, {
      files: { file: atMost(1) },
      body: transcriptionBody,
      // The same bound as a sound in a chat message: the whole request within server.body_limit_mb.
      maxBytes: context.config().server.body_limit_mb * 1024 * 1024,
      limitSetting: 'server.body_limit_mb',
      expected: 'the sound (WAV or MP3) in the "file" field and the model in "model" (as OpenAI\'s transcriptions)',
    });
    const { fields } = form;
    const sound = fileOf(form);
    const generator = await resolveGenerator(context.generation, fields.model);
    // A provider reads its own formats (WebM, M4A, FLAC; verbose_json, srt, vtt): only a local model needs WAV or MP3, json or text.
    if (!generator.local) return forward(context, generator.id, form, sound, request, reply);
    const format = formatOf(fields);
    const language = languageOf(fields);
    const mime = localFormat(sound);
    await checkAudio(context, generator.local);
    const signal = clientGone(request, reply, context.shutdown);
    const turn: GenerationRequest = {
      model: generator.id,
      history: [
        { role: 'user', text: transcriptionInstruction(language, fields.prompt), media: [{ kind: 'audio', data: sound.data, mime, offset: 0, param: 'file' }] },
      ],
      maxTokens: maxTokensOf(sound.data, mime),
      sampling: { temperature: fields.temperature ?? 0 },
      reasoning: { enabled: false },
      stop: [],
      tools: [],
      toolMode: { type: 'none' },
      output: { type: 'text' },
      signal,
    };
    const result = await generator.run(turn).catch((error: unknown) => {
      // The engine's refusal of the sound names the chat's field and advises sending text: here the sound is the form's file, and is the point.
      if (error instanceof HearthError && error.param === 'messages')
        throw new HearthError(error.code, error.message.replace(' Send text only, or let ', ' To transcribe, let '), { param: 'file' });
      throw error;
    });
    if (signal.aborted) return undefined;
    const text = result.text.trim();
    if (format === 'text') return reply.type('text/plain; charset=utf-8').send(text);
    return { text, usage: usageOf(result) } satisfies Transcription;
  });
};

/** A model without an audio encoder is refused before it loads, with the models here that have one. */
async function checkAudio(context: Context, info: LocalModel): Promise<void> {
  if (info.capabilities.includes('audio')) return;
  const able = (await context.generation.catalog.local()).filter((model) => model.capabilities.includes('audio') && !model.error).map((model) => model.id);
  const choice = able.length
    ? `Models here that can: ${able.join(', ')}.`
    : 'No model here can yet: install one whose projector (mmproj) has an audio encoder, such as Voxtral, Ultravox or Qwen2.5-Omni, with its mmproj file beside it.';
  refuse('model', `${info.id} cannot transcribe: it takes no sound (its capabilities in GET /v1/models do not include audio). ${choice}`);
}

/** The transcript's bound for a WAV sound; an MP3 is bounded by the context only. */
function maxTokensOf(data: Buffer, mime: string): number | undefined {
  const seconds = mime === 'audio/wav' ? wavSeconds(data) : undefined;
  return seconds === undefined ? undefined : MIN_TRANSCRIPT_TOKENS + Math.ceil(seconds * TOKENS_PER_SECOND);
}

function usageOf(result: GenerationResult): NonNullable<Transcription['usage']> {
  return {
    type: 'tokens',
    input_tokens: result.promptTokens,
    output_tokens: result.completionTokens,
    total_tokens: result.promptTokens + result.completionTokens,
  };
}

/** A provider's model: the form goes to the provider's /audio/transcriptions with its own name for the model; its answer comes back as it is. */
async function forward(
  context: Context,
  id: string,
  form: Form<TranscriptionFields>,
  sound: Sound,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const providers = context.generation.providers();
  const target = providers.resolve(id);
  if (!target) throw new HearthError('model_not_found', `The model "${id}" does not exist here.`, { param: 'model' });
  const body = new FormData();
  body.set('file', new Blob([new Uint8Array(sound.data)]), sound.name);
  for (const [name, value] of Object.entries(form.fields)) if (value !== undefined) body.set(name, String(value));
  body.set('model', target.model);
  const signal = clientGone(request, reply, context.shutdown);
  const answer = await providers.request(target.provider.name, '/audio/transcriptions', { method: 'POST', body }, signal);
  if (!answer.ok) throw await providers.failure(target.provider.name, answer);
  const text = await readAnswer(answer, target.provider.name);
  return reply.type(answer.headers.get('content-type') ?? 'application/json').send(text);
}
