import type { Migration } from './migrations/migration.js';
import { migration as responses } from './migrations/001-responses.js';
import { migration as accessKeys } from './migrations/002-access-keys.js';
import { migration as memory } from './migrations/003-memory.js';
import { migration as memoryVectors } from './migrations/004-memory-vectors.js';
import { migration as memoryNamespaces } from './migrations/005-memory-namespaces.js';
import { migration as modelDownloads } from './migrations/006-model-downloads.js';
import { migration as imagesMedia } from './migrations/007-images-media.js';
import { migration as agentRuns } from './migrations/008-agent-runs.js';
import { migration as remoteDevices } from './migrations/009-remote-devices.js';
import { migration as imageOwners } from './migrations/010-image-owners-media-spend.js';
import { migration as agentToolCalls } from './migrations/011-agent-tool-calls.js';
import { migration as adminSessions } from './migrations/012-admin-sessions.js';

/** Numbered schema migrations, applied in order; each file holds one and is self-contained. */
export const MIGRATIONS: Migration[] = [
  responses,
  accessKeys,
  memory,
  memoryVectors,
  memoryNamespaces,
  modelDownloads,
  imagesMedia,
  agentRuns,
  remoteDevices,
  imageOwners,
  agentToolCalls,
  adminSessions,
];
