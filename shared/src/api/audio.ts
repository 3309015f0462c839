/** Wire types of POST /v1/audio/transcriptions (OpenAI's shape: a multipart form). */

/** The answer formats a local model can give: `json` (`{text}`) or `text` (the transcript as a plain body). */
export const TRANSCRIPTION_FORMATS = ['json', 'text'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** The text fields of the form; the sound itself is the file field `file` (WAV or MP3). */
export interface TranscriptionFields {
  /** A model whose capabilities include `audio`, or a provider's model (`<provider>/<model>`). */
  model: string;
  /** The speech's language, ISO-639-1 (`en`, `de`); it goes into the instruction the model gets. */
  language?: string;
  /** Context for the transcript: earlier words, the spelling of names. */
  prompt?: string;
  /** `json` (default) or `text`; OpenAI's `verbose_json`, `srt` and `vtt` are refused with a 400. */
  response_format?: string;
  /** 0 when left out. */
  temperature?: number;
}

/** The answer of `response_format: json`. */
export interface Transcription {
  text: string;
  /** Tokens the request took (the sound's and the instruction's) and the transcript's. */
  usage?: { type: 'tokens'; input_tokens: number; output_tokens: number; total_tokens: number };
}
