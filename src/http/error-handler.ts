// The one place where any error becomes an HTTP response with the contract's error body.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, internalError, internalErrorBody } from '../errors/app-error.js';
import type { ErrorCode } from '../errors/catalog.js';
import { schemaIssueToError, type SchemaIssue } from '../errors/schema-errors.js';
import { RequestAbortedError } from '../models/spec.js';

const partNames: Record<string, string> = {
  body: 'request body',
  querystring: 'query string',
  params: 'path',
  headers: 'headers',
};

/** Errors raised by Fastify itself (parsing, limits) mapped to the catalog. */
const fastifyCodes: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_media_type',
    message: "Unsupported Content-Type. Send 'application/json'.",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'invalid_parameter',
    message: 'The request body does not match its Content-Length.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: 'payload_too_large',
    message: 'The request body is too large.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'invalid_json',
    message: "The body is empty but Content-Type is 'application/json'.",
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', message: 'The body is not valid JSON.' },
};

export function toAppError(
  error: FastifyError | Error,
  bodyLimitBytes?: number,
  bodyLimitSetting = 'BODY_LIMIT_BYTES',
): AppError | null {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: SchemaIssue[] };
  if (Array.isArray(fastifyError.validation)) {
    const where = partNames[fastifyError.validationContext ?? 'body'] ?? 'request';
    return schemaIssueToError(fastifyError.validation, where);
  }
  const known = fastifyError.code === undefined ? undefined : fastifyCodes[fastifyError.code];
  if (known !== undefined) {
    if (known.code === 'payload_too_large' && bodyLimitBytes !== undefined) {
      return new AppError(
        known.code,
        `The request body is larger than the ${bodyLimitBytes} bytes accepted (${bodyLimitSetting}).`,
      );
    }
    return new AppError(known.code, known.message);
  }
  // A JSON syntax error from the body parser carries status 400 and no Fastify code.
  if (fastifyError.statusCode === 400 && error instanceof SyntaxError) {
    return new AppError('invalid_json', 'The body is not valid JSON.');
  }
  // A client error raised by a plugin (http-errors' `expose`, e.g. the docs' static files refusing
  // a path outside their folder): what was asked for is not there, and nothing more is said.
  const status = fastifyError.statusCode ?? (error as { status?: number }).status;
  if ((error as { expose?: boolean }).expose === true && status !== undefined) {
    if (status === 403 || status === 404 || status === 410) {
      return new AppError('not_found', 'No such file.');
    }
    if (status >= 400 && status < 500) {
      return new AppError('invalid_parameter', 'The request cannot be served as sent.');
    }
  }
  return null;
}

/**
 * Answers a request Node's HTTP parser refused before Fastify saw it (malformed, headers too large,
 * too slow to arrive) with the contract's error body, then closes the connection.
 */
export function writeClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const appError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new AppError(
          'request_timeout',
          'The request was not received in time (REQUEST_TIMEOUT_MS / HEADERS_TIMEOUT_MS). Send it again.',
        )
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('headers_too_large', 'The request headers are too large.')
        : new AppError('malformed_request', 'The request is not valid HTTP/1.1.');
  const body = JSON.stringify(appError.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status] ?? ''}\r\n` +
        'Connection: close\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Writes an error's body: the contract's (`toBody`) on every route but those of a dialect that has
 * its own error shape (Anthropic's Messages API), which pass theirs as the route's error handler.
 */
export type ErrorBodyWriter = (error: AppError, requestId: string) => unknown;

const contractBody: ErrorBodyWriter = (error) => error.toBody();

/**
 * The error body as JSON text, written here rather than by the route's response serializer: a
 * serializer that fails (a schema that no longer compiles) would make Fastify answer with a body
 * outside the contract that carries the failure's internal message. Should even this fail (a
 * detail that cannot be written), the body is the plain internal error, which always can.
 */
function errorBodyText(error: AppError, requestId: string, writeBody: ErrorBodyWriter): string {
  try {
    return JSON.stringify(writeBody(error, requestId));
  } catch {
    return JSON.stringify(internalErrorBody(requestId));
  }
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: FastifyError | Error,
  writeBody: ErrorBodyWriter = contractBody,
) {
  if (error instanceof RequestAbortedError) {
    // The client hung up: there is nobody to answer. 499 is what the access log records.
    request.log.info('client closed the request before the answer was ready');
    return reply.code(499).send();
  }
  let status = 500;
  let text: string;
  try {
    const appError = toAppError(
      error,
      request.routeOptions.bodyLimit,
      request.routeOptions.config.bodyLimitSetting,
    );
    let answered: AppError;
    if (appError === null) {
      request.log.error({ err: error }, 'unhandled error');
      answered = internalError(request.id);
    } else {
      // A model that is unavailable or busy is an expected, configured state, not a fault.
      if (appError.status >= 500) {
        const level = appError.code === 'model_unavailable' ? 'warn' : 'error';
        request.log[level]({ err: appError, cause: appError.cause }, appError.message);
      }
      status = appError.status;
      answered = appError;
      for (const [name, value] of Object.entries(appError.headers)) void reply.header(name, value);
    }
    text = errorBodyText(answered, request.id, writeBody);
  } catch (failure) {
    // Mapping the error failed (it should not): the contract's internal error, never its message.
    request.log.error({ err: failure, cause: error }, 'the error handler failed');
    status = 500;
    text = JSON.stringify(internalErrorBody(request.id));
  }
  // A string with a JSON content type is sent as it is: no serializer runs on an error body.
  return reply.code(status).type('application/json; charset=utf-8').send(text);
}
