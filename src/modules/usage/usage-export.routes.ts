// GET /v1/usage/export: the account's ledger records of a period as CSV, one row per model call,
// streamed a page at a time (memory stays bounded whatever the period holds).
import { Readable } from 'node:stream';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { FeatureApp } from '../../http/feature-plugin.js';
import { principalOf } from '../../http/types.js';
import { csvColumns } from './usage-csv.js';
import type { UsageService } from './usage-service.js';
import { UsageExportQuerySchema } from './usage.schemas.js';

/** Declares the export route in the usage plugin's context. */
export function registerUsageExport(app: FeatureApp, usage: UsageService): void {
  app.get(
    '/v1/usage/export',
    {
      config: { access: access.scopes('usage:read') },
      schema: {
        operationId: 'exportUsage',
        tags: ['Usage'],
        summary: 'The usage records of a period, as CSV',
        description: `Every model call of the caller's account in the period as one CSV row (RFC 4180, a header row first, CRLF line ends), oldest first: ${csvColumns.map((column) => `\`${column}\``).join(', ')}. \`cost_usd\` has 6 decimals and is empty when the model's price is unknown. A field a spreadsheet would read as a formula (starting with \`=\`, \`+\`, \`-\`, \`@\`, a tab or a carriage return) is prefixed with \`'\`. Query parameters: \`from\`, \`to\` (ISO 8601; default the last 7 days; at most 366 days), and the filters \`key_id\`, \`model\`, \`user_id\`. Needs \`usage:read\` (or \`admin\`).`,
        querystring: UsageExportQuerySchema,
        response: {
          200: {
            description: 'The records, one per line after the header.',
            content: { 'text/csv': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { query } = request;
      const { filter, rows } = usage.exportCsv(accountId, {
        from: query.from,
        to: query.to,
        keyId: query.key_id,
        model: query.model,
        endUser: query.user_id,
      });
      const name = `usage-${filter.from.slice(0, 10)}-${filter.to.slice(0, 10)}.csv`;
      return (
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${name}"`)
          .header('cache-control', 'no-store')
          // The schema documents the text; the body is its stream.
          .send(Readable.from(rows, { objectMode: false }) as unknown as string)
      );
    },
  );
}
