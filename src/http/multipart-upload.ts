// Reading a multipart/form-data upload (@fastify/multipart over busboy) of one file and a few short
// text fields, as /v1/audio/transcriptions takes it: the file is held in memory up to its limit and
// no further (busboy stops passing a file's bytes on past `fileSize`). The body is always read to its
// end, a refused one too, so that a client still sending reads the answer rather than a reset
// connection; how long that may take is bounded by the server's request timeout.
import type { IncomingMessage } from 'node:http';
// The package's types add `parts()` to Fastify's request.
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError, InvalidParameterError } from '../errors/app-error.js';
import { RequestAbortedError } from '../models/spec.js';
import { stringProblem } from '../validation/input-values.js';

export interface UploadLimits {
  /** The file's largest size. */
  maxFileBytes: number;
  /** The setting that says so, named in the 413 (`speech.max_audio_bytes`). */
  maxFileSetting: string;
  /** Text fields a body may have. */
  maxFields: number;
  /** A text field's largest value, in bytes. */
  maxFieldBytes: number;
}

/** Busboy's limits for the plugin's registration: one file, few and short fields. */
export function busboyLimits(limits: UploadLimits) {
  return {
    fileSize: limits.maxFileBytes,
    files: 1,
    fields: limits.maxFields,
    parts: limits.maxFields + 1,
    fieldSize: limits.maxFieldBytes,
    fieldNameSize: 100,
    headerPairs: 20,
  };
}

export interface Upload {
  /** The part named `file`; null when there was none. */
  file: { bytes: Uint8Array; filename: string } | null;
  /** Each text field's values in the order sent (a name such as `include[]` may repeat). */
  fields: Map<string, string[]>;
}

/** Reads the rest of the request, discarding it. */
function drain(raw: IncomingMessage): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => resolve();
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

/** What a failure of the multipart reader means for the client, in the contract's terms. */
function refusal(error: unknown, request: FastifyRequest, limits: UploadLimits): Error {
  if (error instanceof AppError) return error;
  if (request.raw.destroyed && !request.raw.complete) return new RequestAbortedError();
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new AppError(
        'payload_too_large',
        `'file' is larger than the ${limits.maxFileBytes} bytes accepted (${limits.maxFileSetting}).`,
        { param: 'file' },
      );
    case 'FST_FILES_LIMIT':
      return new InvalidParameterError('file', 'Send one file, in the part named `file`.');
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new AppError(
        'invalid_parameter',
        `The form has more than the ${limits.maxFields} fields this operation takes.`,
      );
    case 'FST_PROTO_VIOLATION':
      return new AppError(
        'invalid_parameter',
        'A field is named after a property of Object.prototype (such as __proto__).',
      );
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return new AppError(
        'invalid_parameter',
        'A field declared as application/json is not valid JSON; send the fields as text.',
      );
    case 'FST_MP_PREMATURE_CLOSE':
      return new RequestAbortedError();
    default: {
      // Busboy's own messages are fixed texts ("Unexpected end of form", "Malformed part
      // header", "Multipart: Boundary not found"), never the body's bytes.
      const detail = error instanceof Error ? error.message.slice(0, 120) : 'unreadable';
      return new AppError(
        'invalid_parameter',
        `The multipart/form-data body is malformed (${detail}).`,
      );
    }
  }
}

/**
 * The upload's file and fields. Refuses (after reading the body to its end) a file over the limit
 * (413), a second file or a file under another name, too many or too long fields, and a malformed
 * body (400), in the contract's error body.
 */
export async function readUpload(request: FastifyRequest, limits: UploadLimits): Promise<Upload> {
  const fields = new Map<string, string[]>();
  let file: Upload['file'] = null;
  /** The first thing wrong with the form; reported once the body has been read. */
  let problem: AppError | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const keep = part.fieldname === 'file' && file === null;
        const chunks: Buffer[] = [];
        // Read to its end either way: busboy hands over the next part only after this one.
        for await (const chunk of part.file as AsyncIterable<Buffer>) {
          if (keep) chunks.push(chunk);
        }
        if (!keep) {
          problem ??= new InvalidParameterError(
            part.fieldname,
            `'${part.fieldname.slice(0, 100)}' is a file; only 'file' takes one.`,
          );
        } else if (!part.file.truncated) {
          file = { bytes: Buffer.concat(chunks), filename: part.filename };
        }
        continue;
      }
      const name = part.fieldname;
      const value = part.value;
      if (part.fieldnameTruncated || stringProblem(name) !== null) {
        problem ??= new AppError(
          'invalid_parameter',
          'A field name is over 100 bytes or not text.',
        );
      } else if (part.valueTruncated) {
        problem ??= new InvalidParameterError(
          name,
          `'${name}' is longer than ${limits.maxFieldBytes} bytes.`,
        );
      } else if (typeof value !== 'string') {
        problem ??= new InvalidParameterError(name, `'${name}' must be text.`);
      } else {
        const textProblem = stringProblem(value);
        if (textProblem !== null) {
          problem ??= new InvalidParameterError(name, `'${name}' ${textProblem}.`);
        } else {
          fields.set(name, [...(fields.get(name) ?? []), value]);
        }
      }
    }
  } catch (error) {
    await drain(request.raw);
    throw refusal(error, request, limits);
  }
  if (problem !== null) throw problem;
  return { file, fields };
}
