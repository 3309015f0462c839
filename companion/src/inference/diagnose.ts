import { stat } from 'node:fs/promises';
import { loadBinding } from './binding.js';

/**
 * Explains why llama.cpp refused a file, when the file itself shows it: llama.cpp's own
 * message is often just "Failed to load model".
 */
export async function diagnoseLoadFailure(path: string): Promise<string | undefined> {
  try {
    const { GgufInsights, readGgufFileInfo } = await loadBinding();
    const [insights, file] = await Promise.all([readGgufFileInfo(path).then((info) => GgufInsights.from(info)), stat(path)]);
    if (file.size < insights.modelSize) {
      return `the file is incomplete (${file.size} bytes, its tensors need at least ${insights.modelSize}); download it again`;
    }
    return undefined;
  } catch (error) {
    return `its GGUF header cannot be read (${error instanceof Error ? error.message : String(error)})`;
  }
}
