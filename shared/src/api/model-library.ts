/** Wire types of the loopback-only model library routes: Hugging Face search, downloads, removal. */

/** GET /admin/models/search?q=&limit= */
export interface HubModel {
  /** `owner/repo` on the hub. */
  id: string;
  downloads: number;
  likes: number;
  /** ISO 8601 time of the last change, when the hub says. */
  updated_at: string | null;
}

export interface HubSearchResponse {
  data: HubModel[];
}

/** Whether a file fits the engine's memory budget: comfortably, only just, or not at all. */
export type MemoryFit = 'yes' | 'tight' | 'no';

/** One GGUF model of a repository (a split model is one entry, named by its first part). */
/** A multimodal projector (`mmproj*.gguf`) that a download brings along beside the model. */
export interface HubProjector {
  /** Path inside the repository. */
  name: string;
  size_bytes: number | null;
}

export interface HubFile {
  /** Path inside the repository. */
  name: string;
  /** All parts together, with the projector when one comes along; null when the hub does not say. */
  size_bytes: number | null;
  /** Read from the file name, e.g. `Q4_K_M`; null when the name does not say. */
  quantization: string | null;
  /** Null when the size is unknown. */
  fits: MemoryFit | null;
  /** Parts of a split model (1 for a single file). */
  parts: number;
  /** What to POST to /admin/models/downloads to get exactly this file (and its projector). */
  source: string;
  /** The projector downloaded with it (so the model reads images, or sounds); null when the repository has none. */
  projector: HubProjector | null;
}

/** GET /admin/models/search/{owner}/{repo} */
export interface HubRepoFiles {
  id: string;
  data: HubFile[];
  /** The engine's memory budget the `fits` verdicts were made against. */
  memory_budget_bytes: number;
}

export type DownloadStatus = 'queued' | 'downloading' | 'paused' | 'completed' | 'failed' | 'cancelled';

/** POST /admin/models/downloads */
export interface DownloadRequest {
  /** Anything `hearth pull` accepts: owner/repo, owner/repo:QUANT, owner/repo/file.gguf or an https URL. */
  source: string;
}

export interface ModelDownload {
  /** `dl_…` */
  id: string;
  source: string;
  status: DownloadStatus;
  bytes_done: number;
  /** Null until the size is known. */
  bytes_total: number | null;
  /** Bytes per second over the last few seconds while downloading, else null. */
  bytes_per_second: number | null;
  /** The file being written (first part of a split model). */
  file: string | null;
  /** The id /v1/models lists once the download is complete. */
  model_id: string | null;
  /** Why it failed. */
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface DownloadList {
  data: ModelDownload[];
}

/** DELETE /admin/models/{id}: a downloaded model removed from Hearth's models folder. */
export interface RemovedModel {
  id: string;
  deleted: true;
  /** Files removed (all parts of a split model). */
  files: string[];
}
