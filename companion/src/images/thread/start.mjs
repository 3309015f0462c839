// The image engine thread's first module. The companion runs its TypeScript through tsx, whose
// loader a worker thread does not inherit: it is registered here before the engine module loads.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
