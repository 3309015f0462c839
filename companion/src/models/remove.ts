/** Removing a model the app downloaded: only files in Hearth's own models folder, every part of a split model. */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { HearthError } from '../errors.js';
import { splitPartNames } from './pull-spec.js';
import type { LocalModel } from './types.js';

/** Deletes the model's files; returns their names. Models of other apps (LM Studio, Ollama, …) or other folders are refused. */
export async function removeModelFiles(model: LocalModel, ownFolder: string): Promise<string[]> {
  const folder = path.dirname(model.path);
  if (model.source !== 'models-dir' || path.resolve(folder) !== path.resolve(ownFolder)) {
    throw new HearthError(
      'model_read_only',
      `${model.id} is in ${folder}, not in Hearth's models folder (${ownFolder}); remove it with the app that owns it, or delete the file yourself.`,
      { param: 'id' },
    );
  }
  const names = splitPartNames(path.basename(model.path));
  await Promise.all(names.map((name) => rm(path.join(folder, name), { force: true })));
  return names;
}
