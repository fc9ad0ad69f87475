// Where a model file comes from: `hf:` references resolved to the Hub's URLs, and its digests.
import type { ResolvedSource } from './download-context.js';
import { ModelDownloadError } from './download-errors.js';

export const defaultHuggingFaceEndpoint = 'https://huggingface.co';
export const defaultRevision = 'main';

export const sha256Pattern = /^[0-9a-f]{64}$/;
const repoPartPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Turns a source reference into the URL to fetch (the Hub's `resolve` URL for `hf:` sources). */
export function resolveModelSource(
  source: string,
  options: { endpoint?: string; revision?: string } = {},
): ResolvedSource {
  if (/^https?:\/\//i.test(source)) {
    try {
      return { url: new URL(source).href, huggingFace: null };
    } catch (error) {
      throw new ModelDownloadError('invalid_request', `'${source}' is not a valid URL.`, {
        cause: error,
      });
    }
  }
  if (!source.startsWith('hf:')) {
    throw new ModelDownloadError(
      'invalid_request',
      `Unsupported model source '${source}': expected hf:<owner>/<repo>/<file> or an http(s) URL.`,
    );
  }
  const [owner, repoAndRevision, ...fileParts] = source.slice('hf:'.length).split('/');
  const separator = repoAndRevision?.indexOf(':') ?? -1;
  const repo = separator === -1 ? repoAndRevision : repoAndRevision?.slice(0, separator);
  const inlineRevision = separator === -1 ? undefined : repoAndRevision?.slice(separator + 1);
  const file = fileParts.join('/');
  if (
    owner === undefined ||
    repo === undefined ||
    !repoPartPattern.test(owner) ||
    !repoPartPattern.test(repo) ||
    fileParts.length === 0 ||
    fileParts.some((part) => part === '' || part === '.' || part === '..')
  ) {
    throw new ModelDownloadError(
      'invalid_request',
      `Malformed Hugging Face reference '${source}': expected hf:<owner>/<repo>/<file> or hf:<owner>/<repo>:<revision>/<file>.`,
    );
  }
  if (
    inlineRevision !== undefined &&
    options.revision !== undefined &&
    inlineRevision !== options.revision
  ) {
    throw new ModelDownloadError(
      'invalid_request',
      `'${source}' names revision '${inlineRevision}' but revision '${options.revision}' was also given.`,
    );
  }
  const revision = inlineRevision ?? options.revision ?? defaultRevision;
  if (revision === '') {
    throw new ModelDownloadError('invalid_request', `Empty revision in '${source}'.`);
  }
  const endpoint = (options.endpoint ?? defaultHuggingFaceEndpoint).replace(/\/+$/, '');
  if (!/^https?:\/\/.+/i.test(endpoint)) {
    throw new ModelDownloadError(
      'invalid_request',
      `Hugging Face endpoint '${endpoint}' must be an http(s) URL.`,
    );
  }
  // The revision is one path segment even when it contains slashes (refs/pr/1), as the Hub expects.
  const encodedFile = fileParts.map(encodeURIComponent).join('/');
  const url = `${endpoint}/${owner}/${repo}/resolve/${encodeURIComponent(revision)}/${encodedFile}`;
  return { url, huggingFace: { owner, repo, revision, file, endpoint } };
}

export function sha256FromEtag(etag: string | null): string | null {
  const value = etag
    ?.trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1')
    .toLowerCase();
  return value !== undefined && sha256Pattern.test(value) ? value : null;
}

/** Signed CDN or user URLs may carry credentials in the query string: keep them out of messages. */
export function withoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
