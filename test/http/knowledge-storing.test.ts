// A knowledge document is stored in steps (its chunks in batches that each commit on their own,
// so that no commit grows with the document), and is invisible until the last step counts it: no
// list, search or count shows part of one while its chunks are already in the database; a
// knowledge base deleted midway leaves nothing behind and the upload answers 404; a document a
// stopped process left half-stored is deleted when the service next starts. On both dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer } from '../support/test-app.js';

const prose =
  'The quick brown fox jumps over the lazy dog while the committee reviews the quarterly budget. ';

/** About `length` characters of prose whose first and last sentences hold words of their own. */
function largeDocument(length: number): string {
  const middle = prose.repeat(Math.ceil(length / prose.length)).slice(0, length);
  return `Quasarium opens the report. ${middle} Nebulith closes it.`;
}

/** One look at the knowledge base while a new document is being stored. */
interface Observation {
  /** Chunks of pending documents in the database just before. */
  pendingChunks: number;
  /** How much of the new document each read showed (results, counts), in order. */
  reads: Array<[string, number]>;
  /** Whether the search of words every chunk has found the document stored before. */
  foundEarlier: boolean;
}

describe.each(allDialects)('storing a large knowledge document on $name', (dialect) => {
  let harness: ChatHarness;

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function knowledgeBase(name: string): Promise<string> {
    const response = await call('POST', '/v1/knowledge-bases', { name });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  }

  /** The documents of a search's results, one entry per result. */
  const found = async (kbId: string, query: string) =>
    (await call('POST', `/v1/knowledge-bases/${kbId}/search`, { query, top_k: 50 }))
      .json<{ results: Array<{ document_id: string }> }>()
      .results.map((result) => result.document_id);

  async function pendingChunks(kbId: string): Promise<number> {
    const rows = await harness.services.storage.db
      .selectFrom('chunks')
      .innerJoin('pending_documents', 'pending_documents.document_id', 'chunks.document_id')
      .select('chunks.id')
      .where('pending_documents.kb_id', '=', kbId)
      .execute();
    return rows.length;
  }

  /**
   * Reads the new document through every route that shows it, in this order, next to `earlier`,
   * a document of `earlierChunks` chunks stored before it.
   */
  async function observe(
    kbId: string,
    earlier: string,
    earlierChunks: number,
  ): Promise<Observation> {
    const pending = await pendingChunks(kbId);
    const ofNew = (ids: string[]) => ids.filter((id) => id !== earlier).length;
    const common = await found(kbId, 'committee reviews the quarterly budget');
    // The first chunk's word, then the last one's: written in the first and the last batch.
    const reads: Observation['reads'] = [
      ['every chunk', ofNew(common)],
      ['first chunk', ofNew(await found(kbId, 'quasarium'))],
      ['last chunk', ofNew(await found(kbId, 'nebulith'))],
    ];
    const counts = (await call('GET', `/v1/knowledge-bases/${kbId}`)).json<{
      document_count: number;
      chunk_count: number;
    }>();
    reads.push(
      ['documents counted', counts.document_count - 1],
      ['chunks counted', counts.chunk_count - earlierChunks],
    );
    const listed = (await call('GET', `/v1/knowledge-bases/${kbId}/documents`)).json<{
      total: number;
    }>().total;
    reads.push(['documents listed', listed - 1]);
    return { pendingChunks: pending, reads, foundEarlier: common.includes(earlier) };
  }

  /** Each read as "none" (nothing of the new document), "all" (all of it) or "part". */
  function states(observation: Observation, chunkCount: number): string {
    const all: Record<string, (value: number) => boolean> = {
      // The earlier document may or may not stay among the 50 best.
      'every chunk': (value) => value >= 49,
      'first chunk': (value) => value === 1,
      'last chunk': (value) => value === 1,
      'documents counted': (value) => value === 1,
      'chunks counted': (value) => value === chunkCount,
      'documents listed': (value) => value === 1,
    };
    return observation.reads
      .map(([name, value]) => (value === 0 ? 'none' : all[name]!(value) ? 'all' : 'part'))
      .join(' ');
  }

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('shows no part of a document while its chunks are being stored, and all of it after', async () => {
    const kbId = await knowledgeBase('storing');
    const earlier = await call('POST', `/v1/knowledge-bases/${kbId}/documents`, {
      title: 'Minutes',
      // Many other words and the searched ones once: every chunk of the new document ranks
      // above it, by keywords and by meaning.
      content: `Minutes of the meeting. ${'Members discussed parking, catering and the annual picnic schedule. '.repeat(12)}The committee reviews the quarterly budget.`,
    });
    expect(earlier.statusCode, earlier.body).toBe(201);
    const { id: earlierId, chunk_count: earlierChunks } = earlier.json<{
      id: string;
      chunk_count: number;
    }>();
    let done = false;
    const upload = call('POST', `/v1/knowledge-bases/${kbId}/documents`, {
      title: 'Report',
      content: largeDocument(3_000_000),
    }).finally(() => {
      done = true;
    });
    const observations: Observation[] = [];
    while (!done) observations.push(await observe(kbId, earlierId, earlierChunks));
    const response = await upload;
    expect(response.statusCode, response.body).toBe(201);
    const chunkCount = response.json<{ chunk_count: number }>().chunk_count;
    expect(chunkCount).toBeGreaterThan(2000);
    // Its visibility changes once (the step that counts it): within a look, reads that saw
    // nothing may be followed by reads that saw all of it, never the other way, never a part.
    for (const observation of observations) {
      expect(states(observation, chunkCount), JSON.stringify(observation)).toMatch(
        /^(none ?)*(all ?)*$/,
      );
    }
    // Some looks fell while part of its chunks were already written, and saw nothing of it.
    const midway = observations.filter(
      (observation) =>
        observation.pendingChunks > 0 &&
        observation.pendingChunks < chunkCount &&
        states(observation, chunkCount) === 'none none none none none none',
    );
    expect(midway.length, JSON.stringify(observations)).toBeGreaterThan(0);
    // Its chunks took no place among a search's candidates meanwhile: the earlier document, which
    // has the same words, was found every time.
    expect(midway.filter((observation) => !observation.foundEarlier)).toEqual([]);
    expect(states(await observe(kbId, earlierId, earlierChunks), chunkCount)).toBe(
      'all all all all all all',
    );
  }, 120_000);

  it('answers 404 and leaves nothing behind when the knowledge base is deleted midway', async () => {
    const kbId = await knowledgeBase('deleted while storing');
    const upload = call('POST', `/v1/knowledge-bases/${kbId}/documents`, {
      title: 'Report',
      content: largeDocument(3_000_000),
    });
    let settled = false;
    void upload.finally(() => {
      settled = true;
    });
    while (!settled && (await pendingChunks(kbId)) === 0) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(settled).toBe(false);
    expect((await call('DELETE', `/v1/knowledge-bases/${kbId}`)).statusCode).toBe(200);
    const response = await upload;
    expect(response.statusCode, response.body).toBe(404);
    expect(response.json<{ error: { code: string } }>().error.code).toBe('not_found');
    const db = harness.services.storage.db;
    for (const table of ['documents', 'chunks', 'pending_documents'] as const) {
      const rows = await db.selectFrom(table).select('kb_id').where('kb_id', '=', kbId).execute();
      expect(rows, table).toEqual([]);
    }
  }, 120_000);

  it('deletes, at the next start, a document a stopped process left half-stored', async () => {
    const kbId = await knowledgeBase('left behind');
    const db = harness.services.storage.db;
    const hourAgo = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    const justNow = new Date().toISOString();
    for (const [id, createdAt] of [
      ['doc_leftbehind', hourAgo],
      ['doc_stillstoring', justNow],
    ] as const) {
      await db
        .insertInto('documents')
        .values({
          id,
          kb_id: kbId,
          account_id: (
            await db
              .selectFrom('knowledge_bases')
              .select('account_id')
              .where('id', '=', kbId)
              .executeTakeFirstOrThrow()
          ).account_id,
          title: 'Half',
          content_type: 'text/plain',
          source: null,
          metadata: '{}',
          content: 'Quasarium half.',
          text: 'Quasarium half.',
          char_count: 15,
          chunk_count: 1,
          embedding_status: 'none',
          embedding_error: null,
          created_at: createdAt,
        })
        .execute();
      await db
        .insertInto('pending_documents')
        .values({ document_id: id, kb_id: kbId, created_at: createdAt })
        .execute();
      await harness.services.storage.db
        .insertInto('chunks')
        .values({
          id: `chunk_${id}`,
          document_id: id,
          kb_id: kbId,
          account_id: 'acct',
          position: 0,
          title: 'Half',
          heading: '',
          text: 'Quasarium half.',
          embedding: null,
          created_at: createdAt,
        })
        .execute();
    }
    // Neither is seen while pending.
    expect(await found(kbId, 'quasarium')).toEqual([]);

    // Another instance starts over the same database.
    const restarted = await startChatHarness({ dialect, database: harness.database });
    await restarted.close();
    const left = await db.selectFrom('documents').select('id').where('kb_id', '=', kbId).execute();
    expect(left).toEqual([{ id: 'doc_stillstoring' }]);
    const chunks = await db.selectFrom('chunks').select('id').where('kb_id', '=', kbId).execute();
    expect(chunks).toEqual([{ id: 'chunk_doc_stillstoring' }]);
    expect(
      await db
        .selectFrom('pending_documents')
        .select('document_id')
        .where('kb_id', '=', kbId)
        .execute(),
    ).toEqual([{ document_id: 'doc_stillstoring' }]);
  });
});
