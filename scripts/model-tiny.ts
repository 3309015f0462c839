import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { dataPaths, defaultDataDirectory } from '../companion/src/store/data-dir.js';
import { defaultSeed, modelSizes, writeTinyModel, type ModelSize } from './gguf/write-model.js';
import { writeTinyProjector } from './gguf/write-projector.js';

const usage = `Usage: npm run model:tiny -- [OUT.gguf] [--size ${modelSizes.join('|')}] [--seed N] [--embedding | [--vision] [--audio]] [--fim] [--thinking] [--context N] [--data-dir DIR]
Writes a deterministic random-weight GGUF test model (default: --size tiny --seed ${defaultSeed}).
--embedding writes an embedding model (mean pooling, no chat template) for /v1/embeddings.
--fim adds fill-in-the-middle tokens (Qwen2.5-Coder's <|fim_prefix|>, <|fim_suffix|>, <|fim_middle|>) for suffix and /infill.
--thinking writes a chat format with a thought segment (Qwen3's <think>, opened by the template; end it with a reasoning budget).
--context N says the model was trained on N tokens (default 2048), for clients that send long prompts (Claude Code sends about 30,000).
--vision also writes a tiny vision projector beside the model (mmproj-NAME.gguf, which discovery pairs with it).
--audio writes a tiny sound projector there instead (Ultravox's type: 30 tokens a sound of up to 30 s), or with --vision one projector with both encoders.
Without OUT it goes into the data folder's models/ (--data-dir, else HEARTH_DATA_DIR, else ~/.hearth)
as SIZE.gguf (SIZE-embedding.gguf, SIZE-fim.gguf, SIZE-thinking.gguf), so a companion on that data folder lists it as the model "tiny"
(or "small", "tiny-embedding", "tiny-fim", "tiny-thinking").`;

function fail(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

interface Arguments {
  outPath: string;
  size: ModelSize;
  seed: number;
  embedding: boolean;
  vision: boolean;
  audio: boolean;
  fim: boolean;
  thinking: boolean;
  contextLength: number | undefined;
}

function readArguments(): Arguments {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        size: { type: 'string', default: 'tiny' },
        seed: { type: 'string', default: String(defaultSeed) },
        embedding: { type: 'boolean', default: false },
        vision: { type: 'boolean', default: false },
        audio: { type: 'boolean', default: false },
        fim: { type: 'boolean', default: false },
        thinking: { type: 'boolean', default: false },
        context: { type: 'string' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    fail((error as Error).message);
  }
  const { positionals, values } = parsed;
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  if (positionals.length > 1) fail('Expected at most one output path.');
  if (values.embedding && (values.vision || values.audio)) fail(`--embedding and --${values.vision ? 'vision' : 'audio'} do not go together.`);
  if (values.embedding && values.fim) fail('--embedding and --fim do not go together.');
  if (values.embedding && values.thinking) fail('--embedding and --thinking do not go together.');
  const size = values.size as ModelSize;
  if (!modelSizes.includes(size)) fail(`Unknown size "${values.size}".`);
  const seed = Number(values.seed);
  if (!/^\d+$/.test(values.seed) || seed > 0xffffffff) fail(`Seed must be an integer from 0 to ${0xffffffff}.`);
  const context = values.context === undefined ? undefined : Number(values.context);
  if (context !== undefined && (!/^\d+$/.test(values.context!) || context < 64 || context > 1048576))
    fail('--context must be a whole number of tokens from 64 to 1048576.');
  const models = dataPaths(values['data-dir'] ?? process.env.HEARTH_DATA_DIR ?? defaultDataDirectory()).models;
  const outPath = positionals[0] ?? join(models, `${size}${values.embedding ? '-embedding' : values.fim ? '-fim' : values.thinking ? '-thinking' : ''}.gguf`);
  return {
    outPath,
    size,
    seed,
    embedding: values.embedding,
    vision: values.vision,
    audio: values.audio,
    fim: values.fim,
    thinking: values.thinking,
    contextLength: context,
  };
}

const { outPath, size, seed, embedding, vision, audio, fim, thinking, contextLength } = readArguments();
mkdirSync(dirname(outPath), { recursive: true });
const { path, bytes } = await writeTinyModel(outPath, { size, seed, embedding, fim, thinking, contextLength });
console.log(
  `${path} ${bytes} bytes (${(bytes / 1e6).toFixed(1)} MB, ${size}${embedding ? ' embedding' : ''}${fim ? ' fim' : ''}${thinking ? ' thinking' : ''}, seed ${seed})`,
);
if (vision || audio) {
  const projector = await writeTinyProjector(join(dirname(outPath), `mmproj-${basename(outPath)}`), { size, seed, vision, audio });
  const kind = vision && audio ? 'vision and audio' : vision ? 'vision' : 'audio';
  console.log(`${projector.path} ${projector.bytes} bytes (${kind} projector for ${size})`);
}
