// The one place where any error becomes an HTTP response with the contract's error body.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, internalErrorBody, type ErrorBody } from '../errors/app-error.js';
import type { ErrorCode } from '../errors/catalog.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/messages/0/role` → `messages[0].role` */
function paramPath(instancePath: string, child?: string): string | null {
  const parts = instancePath.split('/').filter((part) => part.length > 0);
  if (child !== undefined) parts.push(child);
  if (parts.length === 0) return null;
  return parts
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (path, part) =>
        /^\d+$/.test(part) ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`,
      '',
    );
}

const partNames: Record<string, string> = {
  body: 'request body',
  querystring: 'query string',
  params: 'path',
  headers: 'headers',
};

function fromValidation(validation: AjvError[], context: string | undefined): AppError {
  const first = validation[0];
  const where = partNames[context ?? 'body'] ?? 'request';
  if (first === undefined) return new AppError('invalid_parameter', `The ${where} is invalid.`);
  if (first.keyword === 'required') {
    const param = paramPath(first.instancePath, String(first.params.missingProperty));
    return new AppError('missing_parameter', `'${param}' is required in the ${where}.`, { param });
  }
  if (first.keyword === 'additionalProperties') {
    const param = paramPath(first.instancePath, String(first.params.additionalProperty));
    return new AppError(
      'invalid_parameter',
      `'${param}' is not a known parameter of the ${where}.`,
      {
        param,
      },
    );
  }
  const param = paramPath(first.instancePath);
  if (param === null) {
    const expected = context === 'body' ? ' a JSON object' : '';
    return new AppError(
      'invalid_parameter',
      `The ${where} must be${expected || ' valid'}: ${first.message ?? 'invalid'}.`,
      {
        param,
      },
    );
  }
  let message = first.message ?? 'is invalid';
  if (first.keyword === 'enum' && Array.isArray(first.params.allowedValues)) {
    message = `must be one of ${first.params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return new AppError('invalid_parameter', `'${param}' ${message}.`, { param });
}

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

export function toAppError(error: FastifyError | Error): AppError | null {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: AjvError[] };
  if (Array.isArray(fastifyError.validation)) {
    return fromValidation(fastifyError.validation, fastifyError.validationContext);
  }
  const known = fastifyError.code === undefined ? undefined : fastifyCodes[fastifyError.code];
  if (known !== undefined) {
    const message =
      known.code === 'payload_too_large'
        ? `${known.message} ${fastifyError.message}.`
        : known.message;
    return new AppError(known.code, message);
  }
  // A JSON syntax error from the body parser carries status 400 and no Fastify code.
  if (fastifyError.statusCode === 400 && error instanceof SyntaxError) {
    return new AppError('invalid_json', 'The body is not valid JSON.');
  }
  return null;
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: FastifyError | Error,
) {
  const appError = toAppError(error);
  let status: number;
  let body: ErrorBody;
  if (appError === null) {
    request.log.error({ err: error }, 'unhandled error');
    status = 500;
    body = internalErrorBody(request.id);
  } else {
    if (appError.status >= 500)
      request.log.error({ err: appError, cause: appError.cause }, appError.message);
    status = appError.status;
    body = appError.toBody();
    for (const [name, value] of Object.entries(appError.headers)) void reply.header(name, value);
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
