// The shapes a model download passes between its steps.

export interface DownloadProgress {
  /** Bytes on disk so far, including a resumed partial file. */
  receivedBytes: number;
  totalBytes: number | null;
  /** Recent transfer rate (a few seconds' window), 0 until measurable. */
  bytesPerSecond: number;
}

export interface DownloadOptions {
  /** `hf:<owner>/<repo>/<file>`, `hf:<owner>/<repo>:<revision>/<file>`, or an http(s) URL. */
  source: string;
  /** Final path; bytes go to `<destination>.partial` until verified. */
  destination: string;
  /** Revision for `hf:` sources without one in the reference (default `main`). */
  revision?: string;
  /** Expected hex sha256; when absent for `hf:` sources, the Hub's published digest is used. */
  sha256?: string;
  /** Hugging Face base URL (callers pass HF_ENDPOINT); default https://huggingface.co. */
  endpoint?: string;
  /** Hugging Face token for gated or private models; sent only to the endpoint's origin. */
  token?: string;
  signal?: AbortSignal;
  /** Called at most every ~100 ms, plus once at the start and once at the end. */
  onProgress?: (progress: DownloadProgress) => void;
  /** How long to wait for response headers (redirects included) before giving up. */
  connectTimeoutMs?: number;
  /** How long the body may deliver no bytes before the download counts as interrupted. */
  stallTimeoutMs?: number;
}

export interface DownloadResult {
  path: string;
  /** The URL requested (without any query string). */
  url: string;
  sizeBytes: number;
  /** The sha256 of the file now at `path`. */
  sha256: string;
  /** Where the expected digest came from; 'none' means the file could not be verified. */
  checksumSource: 'option' | 'hub' | 'none';
  /** Size of the partial file this call continued from (0 for a fresh download). */
  resumedFromBytes: number;
  /** Bytes transferred over the network by this call. */
  downloadedBytes: number;
}

export interface HuggingFaceFile {
  owner: string;
  repo: string;
  revision: string;
  file: string;
}

export interface ResolvedSource {
  url: string;
  /** Set for `hf:` sources. */
  huggingFace: (HuggingFaceFile & { endpoint: string }) | null;
}

export interface DownloadContext {
  options: DownloadOptions;
  resolved: ResolvedSource;
  displayUrl: string;
  partialPath: string;
  authorization: string | null;
  connectTimeoutMs: number;
  stallTimeoutMs: number;
}

export interface Transfer {
  sizeBytes: number;
  sha256: string;
  resumedFromBytes: number;
  downloadedBytes: number;
}
