// Knowledge bases end to end through the real app, on every dialect: CRUD, ingestion of HTML,
// Markdown and plain text, hybrid and keyword-only search over a small corpus, failed embeddings,
// tenant isolation, deletes reaching both indexes, validation and scopes.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { fakeEmbedding } from '../support/fake-upstream.js';
import {
  bearer,
  createAccount,
  createKey,
  startTestApp,
  type TestApp,
} from '../support/test-app.js';

interface ErrorJson {
  error: {
    message: string;
    type: string;
    code: string;
    param: string | null;
    required_scope?: string;
  };
}

interface KnowledgeBaseJson {
  id: string;
  name: string;
  description: string;
  embedding_model: string | null;
  embedding_dimensions: number | null;
  document_count: number;
  chunk_count: number;
  search_mode: 'hybrid' | 'bm25';
  notice: string | null;
  created_at: string;
  updated_at: string;
}

interface DocumentJson {
  id: string;
  knowledge_base_id: string;
  title: string;
  content_type: string;
  source: string | null;
  metadata: Record<string, unknown>;
  char_count: number;
  chunk_count: number;
  embedding_status: 'complete' | 'none' | 'unavailable' | 'failed';
  embedding_error: string | null;
  created_at: string;
}

interface SearchResultJson {
  document_id: string;
  chunk_id: string;
  knowledge_base_id: string;
  title: string;
  heading: string;
  text: string;
  score: number;
  source: string | null;
  metadata: Record<string, unknown>;
  keyword_rank: number | null;
  vector_rank: number | null;
  similarity: number | null;
}

interface SearchJson {
  results: SearchResultJson[];
  mode: 'hybrid' | 'bm25';
  notice: string | null;
  query: string;
  top_k: number;
}

interface CorpusDocument {
  key: string;
  title?: string;
  content_type: 'text/plain' | 'text/markdown' | 'text/html';
  content: string;
  source?: string;
}

/** A dozen documents on distinct topics, in all three formats; some share words on purpose. */
const corpus: CorpusDocument[] = [
  {
    key: 'bread',
    content_type: 'text/html',
    source: 'https://example.com/bread',
    content: `<!doctype html><html><head><title>Sourdough bread baking</title>
      <script>var zanzibarscript = 1;</script><style>.zanzibarstyle{}</style></head><body>
      <nav><a href="/">zanzibarnavigation home</a></nav>
      <main><h1>Sourdough bread</h1>
      <h2>Feeding the starter</h2><p>Feed the sourdough starter with equal weights of flour and water every day. A lively starter doubles within six hours.</p>
      <h2>Baking</h2><p>Bake the loaf in a preheated Dutch oven at 250 degrees for a crisp crust.</p></main>
      <footer>zanzibarfooter copyright</footer></body></html>`,
  },
  {
    key: 'kubernetes',
    content_type: 'text/markdown',
    source: 'docs/kubernetes.md',
    content: `# Kubernetes deployment guide

## Install

### Linux

Install kubectl with the package manager of your distribution, then configure the cluster context.

### Windows

Install kubectl with winget and add it to the PATH.

## Rollbacks

When a release misbehaves, run \`kubectl rollout undo\` to return the deployment to its previous revision.
`,
  },
  {
    key: 'bees',
    title: 'Honeybee colonies',
    content_type: 'text/plain',
    content: `A honeybee colony lives in a hive with one queen, thousands of workers and a few drones.

The queen lays up to two thousand eggs a day in the wax comb. Workers feed the larvae and store nectar as honey.

Bees pollinate orchards and crops while they gather nectar and pollen.`,
  },
  {
    key: 'postgres',
    content_type: 'text/markdown',
    content: `# PostgreSQL replication

Streaming replication ships the write-ahead log from the primary server to a standby server.

## Failover

If the primary fails, promote the standby with pg_ctl promote and point clients at it.
`,
  },
  {
    key: 'marathon',
    title: 'Marathon training plan',
    content_type: 'text/plain',
    content: `Build weekly mileage slowly and add one long run every weekend.

Tapering means cutting mileage during the last three weeks before the race so the legs recover. Drink water and take electrolytes during the race.`,
  },
  {
    key: 'tomatoes',
    content_type: 'text/html',
    content: `<h1>Growing tomatoes</h1><p>Tomatoes need full sun, rich soil and deep watering twice a week.</p>
      <h2>Diseases</h2><p>Early blight shows as brown rings on the lower leaves; remove them and water at the base.</p>`,
  },
  {
    key: 'volcano',
    title: 'Volcanic eruptions',
    content_type: 'text/plain',
    content:
      'Magma rises through the crust and erupts as lava, ash and gas. Explosive eruptions throw ash kilometres into the stratosphere.',
  },
  {
    key: 'espresso',
    content_type: 'text/markdown',
    content: `# Espresso brewing

Grind the coffee beans finely, tamp the grounds evenly and extract for about 25 seconds.
A good shot has a thick golden crema.
`,
  },
  {
    key: 'chess',
    title: 'Chess openings',
    content_type: 'text/plain',
    content:
      "The Sicilian Defence answers 1. e4 with c5. In the Queen's Gambit, White offers a pawn to gain control of the centre.",
  },
  {
    key: 'solar',
    content_type: 'text/html',
    content: `<article><h1>Solar panels</h1><p>Photovoltaic cells turn sunlight into direct current; an inverter converts it to alternating current for the home.</p></article>`,
  },
  {
    key: 'octopus',
    title: 'Octopus intelligence',
    content_type: 'text/plain',
    content:
      'Octopuses solve puzzles, open jars and change the colour of their skin for camouflage within a fraction of a second.',
  },
  {
    key: 'rust',
    content_type: 'text/markdown',
    content: `# Rust ownership

Every value has one owner. The borrow checker makes sure references never outlive the data they point to, using lifetimes.
`,
  },
];

/** The request body of a corpus document. */
function body({ key: _key, ...document }: CorpusDocument): Omit<CorpusDocument, 'key'> {
  return document;
}

function corpusBody(key: string): Omit<CorpusDocument, 'key'> {
  return body(corpus.find((entry) => entry.key === key)!);
}

describe.each(allDialects)('knowledge bases on $name', (dialect) => {
  let harness: ChatHarness;
  let kb: KnowledgeBaseJson;
  const documentIds = new Map<string, string>();

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, key?: string) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(key ?? harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function createKnowledgeBase(
    body: Record<string, unknown> = {},
    key?: string,
  ): Promise<KnowledgeBaseJson> {
    const response = await call('POST', '/v1/knowledge-bases', { name: 'kb', ...body }, key);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<KnowledgeBaseJson>();
  }

  async function addDocument(kbId: string, document: Record<string, unknown>, key?: string) {
    const response = await call('POST', `/v1/knowledge-bases/${kbId}/documents`, document, key);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<DocumentJson>();
  }

  async function search(kbId: string, query: string, topK = 5, key?: string) {
    const response = await call(
      'POST',
      `/v1/knowledge-bases/${kbId}/search`,
      { query, top_k: topK },
      key,
    );
    expect(response.statusCode, response.body).toBe(200);
    return response.json<SearchJson>();
  }

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    kb = await createKnowledgeBase({ name: 'Corpus', description: 'A dozen topics' });
    for (const entry of corpus) {
      documentIds.set(entry.key, (await addDocument(kb.id, body(entry))).id);
    }
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  it('creates a knowledge base with the first available embedding model', async () => {
    expect(kb).toMatchObject({
      name: 'Corpus',
      description: 'A dozen topics',
      embedding_model: 'fake-embed',
      search_mode: 'hybrid',
      notice: null,
    });
    expect(kb.id).toMatch(/^kb_[A-Za-z0-9]{22}$/);
    const fetched = await call('GET', `/v1/knowledge-bases/${kb.id}`);
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json<KnowledgeBaseJson>()).toMatchObject({
      id: kb.id,
      embedding_dimensions: 64,
      document_count: corpus.length,
    });
    expect(fetched.json<KnowledgeBaseJson>().chunk_count).toBeGreaterThanOrEqual(corpus.length);
  });

  it('stores each document with its extracted text, chunks and vectors', async () => {
    const page = await call('GET', `/v1/knowledge-bases/${kb.id}/documents?limit=5&offset=0`);
    expect(page.statusCode).toBe(200);
    const listing = page.json<{ documents: DocumentJson[]; total: number; limit: number }>();
    expect(listing.total).toBe(corpus.length);
    expect(listing.documents).toHaveLength(5);
    expect(listing.documents[0]).not.toHaveProperty('content');
    const all = (await call('GET', `/v1/knowledge-bases/${kb.id}/documents?limit=100`)).json<{
      documents: DocumentJson[];
    }>().documents;
    const bread = all.find((document) => document.id === documentIds.get('bread'))!;
    // The HTML's own title, the source, and every chunk embedded.
    expect(bread).toMatchObject({
      title: 'Sourdough bread baking',
      content_type: 'text/html',
      source: 'https://example.com/bread',
      embedding_status: 'complete',
      embedding_error: null,
      chunk_count: 2,
    });
    const kubernetes = all.find((document) => document.id === documentIds.get('kubernetes'))!;
    expect(kubernetes).toMatchObject({ title: 'Kubernetes deployment guide', chunk_count: 3 });
    // Markup is not text: the HTML's script, style, navigation and footer count for nothing.
    expect(bread.char_count).toBeLessThan(300);
  });

  it("keeps each chunk's vector exactly as the model returned it, in float32", async () => {
    const target = await createKnowledgeBase({ name: 'Vectors' });
    harness.upstream.reset();
    const document = await addDocument(target.id, corpusBody('kubernetes'));
    const inputs = harness.upstream.requests
      .filter((request) => request.endpoint === 'embeddings')
      .flatMap((request) => (request.body as { input: string[] }).input);
    const rows = await harness.services.storage.db
      .selectFrom('chunks')
      .select('embedding')
      .where('document_id', '=', document.id)
      .orderBy('position')
      .execute();
    expect(rows.length).toBeGreaterThan(1);
    expect(rows).toHaveLength(inputs.length);
    rows.forEach((row, index) => {
      // SQLite keeps the float32 bytes, PostgreSQL a real[] (each read as its shortest text).
      const stored = Array.from(
        Buffer.isBuffer(row.embedding)
          ? new Float32Array(Uint8Array.from(row.embedding).buffer)
          : Float32Array.from(row.embedding ?? []),
      );
      expect(stored).toEqual(Array.from(Float32Array.from(fakeEmbedding(inputs[index]!))));
    });
  });

  it('finds the right passage first by keyword, with its heading path', async () => {
    const expectations: [string, string, string?][] = [
      ['tapering before the race', 'marathon'],
      ['golden crema', 'espresso'],
      ['promote the standby after failover', 'postgres', 'PostgreSQL replication > Failover'],
      [
        'kubectl rollout undo to a previous revision',
        'kubernetes',
        'Kubernetes deployment guide > Rollbacks',
      ],
      ['brown rings of blight on tomato leaves', 'tomatoes', 'Growing tomatoes > Diseases'],
      ['photovoltaic inverter', 'solar'],
      ['borrow checker lifetimes', 'rust'],
    ];
    for (const [query, key, heading] of expectations) {
      const found = await search(kb.id, query);
      expect(found.mode).toBe('hybrid');
      expect(found.notice).toBeNull();
      const first = found.results[0]!;
      expect(first.document_id, query).toBe(documentIds.get(key));
      expect(first.keyword_rank, query).toBe(1);
      if (heading !== undefined) expect(first.heading, query).toBe(heading);
    }
  });

  it('finds the passage by meaning when the query shares words but not its keyword', async () => {
    // Neither query names the topic ("bee", "honeybee", "espresso", "crema"); they describe it
    // with words of the passage, which is what the bag-of-words fake embeddings can place.
    for (const [query, key] of [
      ['workers store nectar as honey', 'bees'],
      ['coffee grounds shot', 'espresso'],
    ] as const) {
      const found = await search(kb.id, query);
      expect(found.mode).toBe('hybrid');
      expect(found.results[0]!.document_id, query).toBe(documentIds.get(key));
      expect(found.results[0]!.vector_rank, query).toBe(1);
      expect(found.results[0]!.similarity, query).toBeGreaterThan(0.3);
    }
    const found = await search(kb.id, 'workers store nectar as honey');
    const first = found.results[0]!;
    expect(first.text).toContain('store nectar as honey');
    // Ranked by fused score, each within 0..1; first in both rankings scores 1.
    expect(first.score).toBe(1);
    for (const [index, result] of found.results.entries()) {
      expect(result.score).toBeGreaterThan(0);
      expect(result.score).toBeLessThanOrEqual(1);
      if (index > 0) expect(result.score).toBeLessThanOrEqual(found.results[index - 1]!.score);
    }
    // The vector ranking orders by similarity.
    const byVector = found.results
      .filter((result) => result.vector_rank !== null)
      .sort((a, b) => a.vector_rank! - b.vector_rank!);
    for (let index = 1; index < byVector.length; index += 1) {
      expect(byVector[index]!.similarity!).toBeLessThanOrEqual(byVector[index - 1]!.similarity!);
    }
  });

  it('embeds the query with the knowledge base’s model at search time', async () => {
    await search(kb.id, 'octopus camouflage');
    const embeddingCalls = harness.upstream.requests.filter(
      (request) => request.endpoint === 'embeddings',
    );
    expect(embeddingCalls).toHaveLength(1);
    expect(embeddingCalls[0]!.body).toMatchObject({
      model: 'text-embedding-3-small',
      input: ['octopus camouflage'],
    });
  });

  it('never indexes scripts, styles, navigation or footers of HTML', async () => {
    for (const word of [
      'zanzibarscript',
      'zanzibarstyle',
      'zanzibarnavigation',
      'zanzibarfooter',
    ]) {
      const found = await search(kb.id, word, 50);
      expect(
        found.results.every((result) => result.keyword_rank === null),
        word,
      ).toBe(true);
      expect(
        found.results.some((result) => result.text.includes(word)),
        word,
      ).toBe(false);
    }
  });

  it('keeps min_score and top_k', async () => {
    const few = await search(kb.id, 'water', 2);
    expect(few.results).toHaveLength(2);
    expect(few.top_k).toBe(2);
    const response = await call('POST', `/v1/knowledge-bases/${kb.id}/search`, {
      query: 'water',
      top_k: 50,
      min_score: 0.9,
    });
    const strict = response.json<SearchJson>();
    expect(strict.results.length).toBeGreaterThan(0);
    expect(strict.results.every((result) => result.score >= 0.9)).toBe(true);
    expect(strict.results.length).toBeLessThan((await search(kb.id, 'water', 50)).results.length);
  });

  it('takes any text as a query without a syntax error', async () => {
    for (const query of [
      '"foo',
      'a AND OR',
      'NEAR(x y',
      '*',
      '-espresso',
      "it's (crema)",
      '::',
      'é ü ß 東京',
    ]) {
      const response = await call('POST', `/v1/knowledge-bases/${kb.id}/search`, { query });
      expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
    }
    const quoted = await search(kb.id, '"crema');
    expect(quoted.results[0]!.document_id).toBe(documentIds.get('espresso'));
  });

  it('searches by keywords alone, and says so, when the knowledge base has no embedding model', async () => {
    const keywordOnly = await createKnowledgeBase({ name: 'Keywords', embedding_model: null });
    expect(keywordOnly).toMatchObject({ embedding_model: null, search_mode: 'bm25' });
    expect(keywordOnly.notice).toContain('no embedding model');
    const document = await addDocument(keywordOnly.id, corpusBody('espresso'));
    expect(document).toMatchObject({ embedding_status: 'none', embedding_error: null });
    harness.upstream.reset();
    const found = await search(keywordOnly.id, 'crema');
    expect(found.mode).toBe('bm25');
    expect(found.notice).toMatch(
      /^Semantic search is off: .*no embedding model.* Results are ranked by keywords alone\.$/,
    );
    expect(found.results[0]).toMatchObject({
      document_id: document.id,
      score: 1,
      vector_rank: null,
      similarity: null,
      keyword_rank: 1,
    });
    // No vector work at all: nothing was embedded at upload or at search.
    expect(harness.upstream.requests).toHaveLength(0);
  });

  it('stores a document without vectors when embedding fails, and finds it by keywords', async () => {
    const target = await createKnowledgeBase({ name: 'Flaky' });
    await addDocument(target.id, { title: 'Cats', content: 'Cats purr when they are content.' });
    harness.upstream.enqueueFor('embeddings', { kind: 'error', status: 500 });
    const document = await addDocument(target.id, {
      title: 'Lighthouses',
      content: 'A lighthouse keeper trims the lamp wick every evening.',
    });
    expect(document.embedding_status).toBe('failed');
    expect(document.embedding_error).toContain("Embedding with 'fake-embed' failed");
    const found = await search(target.id, 'lighthouse keeper');
    expect(found.mode).toBe('hybrid');
    expect(found.results[0]).toMatchObject({
      document_id: document.id,
      keyword_rank: 1,
      vector_rank: null,
    });
    expect(found.notice).toContain('1 chunk of 1 document');
    expect(found.notice).toContain('found by keywords only');
  });

  it('embeds a long document in batches, each vector with its own chunk', async () => {
    const target = await createKnowledgeBase({ name: 'Long' });
    // Twelve made-up words of its own per section: enough to stand out of the fake's 64 hashed
    // dimensions (random letters, as similar names like q3w0 and q18w0 hash alike there).
    let seed = 20_261_123;
    const letter = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return 'abcdefghijklmnopqrstuvwxyz'[Math.floor(seed / 65_536) % 26]!;
    };
    const sectionWords = Array.from({ length: 150 }, () =>
      Array.from({ length: 12 }, () => Array.from({ length: 8 }, letter).join('')).join(' '),
    );
    const words = (index: number) => sectionWords[index]!;
    const sections = Array.from(
      { length: 150 },
      (_, index) => `## Topic ${index}\n\n${words(index)}.`,
    );
    harness.upstream.reset();
    const document = await addDocument(target.id, {
      title: 'Many sections',
      content: sections.join('\n\n'),
      content_type: 'text/markdown',
    });
    expect(document).toMatchObject({ chunk_count: 150, embedding_status: 'complete' });
    const batches = harness.upstream.requests.filter(
      (request) => request.endpoint === 'embeddings',
    );
    expect(batches.map((request) => (request.body as { input: string[] }).input.length)).toEqual([
      64, 64, 22,
    ]);
    for (const index of [3, 70, 140]) {
      const found = await search(target.id, words(index));
      expect(found.results[0]!.heading).toBe(`Topic ${index}`);
      expect(found.results[0]!.vector_rank).toBe(1);
      expect(found.results[0]!.similarity).toBeGreaterThan(0.5);
    }
  });

  it('falls back to keywords, and says so, when the query cannot be embedded', async () => {
    harness.upstream.enqueueFor('embeddings', { kind: 'error', status: 500 });
    const found = await search(kb.id, 'golden crema');
    expect(found.mode).toBe('bm25');
    expect(found.notice).toContain("The query could not be embedded with 'fake-embed'");
    expect(found.results[0]!.document_id).toBe(documentIds.get('espresso'));
    expect(found.results.every((result) => result.vector_rank === null)).toBe(true);
  });

  it('searches several knowledge bases of the account at once, for RetrievalAgent', async () => {
    const principal = await harness.services.authenticator.authenticate(
      harness.adminKey,
      '127.0.0.1',
    );
    const other = await createKnowledgeBase({ name: 'Other' });
    const extra = await addDocument(other.id, {
      title: 'Mountain huts',
      content: 'Alpine huts serve hot soup to hikers above the tree line.',
    });
    const found = await harness.services.knowledge.search(
      principal.accountId,
      [kb.id, other.id],
      'alpine huts soup for hikers',
      { topK: 3 },
    );
    expect(found.mode).toBe('hybrid');
    expect(found.results[0]).toMatchObject({ documentId: extra.id, knowledgeBaseId: other.id });
    const crema = await harness.services.knowledge.search(
      principal.accountId,
      [kb.id, other.id],
      'crema',
    );
    expect(crema.results[0]!.knowledgeBaseId).toBe(kb.id);
    await expect(
      harness.services.knowledge.search(principal.accountId, [kb.id, 'kb_doesnotexist'], 'crema'),
    ).rejects.toMatchObject({
      code: 'not_found',
      message: "Knowledge base 'kb_doesnotexist' not found.",
    });
  });

  it('deletes a document from both indexes', async () => {
    const target = await createKnowledgeBase({ name: 'Deletes' });
    const keep = await addDocument(target.id, corpusBody('volcano'));
    const gone = await addDocument(target.id, corpusBody('octopus'));
    expect((await search(target.id, 'octopus camouflage')).results[0]!.document_id).toBe(gone.id);
    const goneRows = await harness.services.storage.db
      .selectFrom('chunks')
      .select('number')
      .where('document_id', '=', gone.id)
      .execute();
    expect(goneRows.length).toBeGreaterThan(0);

    const deleted = await call('DELETE', `/v1/knowledge-bases/${target.id}/documents/${gone.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({
      success: true,
      message: `Document '${gone.id}' deleted.`,
      id: gone.id,
    });

    // Neither ranking returns it any more: keyword search finds nothing, and the vector ranking
    // (which ranks every chunk with a vector) returns only the remaining document.
    const after = await search(target.id, 'octopus camouflage skin colour puzzles jars', 50);
    expect(after.mode).toBe('hybrid');
    expect(after.results.every((result) => result.document_id === keep.id)).toBe(true);
    expect(after.results.every((result) => result.keyword_rank === null)).toBe(true);
    const knowledgeBase = (
      await call('GET', `/v1/knowledge-bases/${target.id}`)
    ).json<KnowledgeBaseJson>();
    expect(knowledgeBase).toMatchObject({ document_count: 1, chunk_count: keep.chunk_count });
    const rows = await harness.services.storage.db
      .selectFrom('chunks')
      .select('id')
      .where('document_id', '=', gone.id)
      .execute();
    expect(rows).toEqual([]);
    if (dialect.name === 'sqlite') {
      // The contentless FTS5 index dropped its entries too (a join would hide orphans).
      const numbers = goneRows.map((row) => row.number);
      const { rows: matches } = await sql<{
        rowid: number;
      }>`select rowid from chunks_fts where chunks_fts match 'octopuses'`.execute(
        harness.services.storage.db,
      );
      expect(matches.filter((row) => numbers.includes(row.rowid))).toEqual([]);
      // The same words are still indexed for the corpus's copy of the document.
      expect(matches.length).toBeGreaterThan(0);
    }
    expect(
      (await call('DELETE', `/v1/knowledge-bases/${target.id}/documents/${gone.id}`)).statusCode,
    ).toBe(404);
  });

  it('deletes a knowledge base with its documents and chunks', async () => {
    const target = await createKnowledgeBase({ name: 'Doomed' });
    await addDocument(target.id, {
      title: 'Quokkas',
      content: 'Quokkas are small marsupials that seem to smile.',
    });
    const deleted = await call('DELETE', `/v1/knowledge-bases/${target.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({
      success: true,
      message: `Knowledge base '${target.id}' deleted.`,
      id: target.id,
    });
    expect((await call('GET', `/v1/knowledge-bases/${target.id}`)).statusCode).toBe(404);
    expect(
      (await call('POST', `/v1/knowledge-bases/${target.id}/search`, { query: 'quokkas' }))
        .statusCode,
    ).toBe(404);
    const db = harness.services.storage.db;
    expect(
      await db.selectFrom('documents').select('id').where('kb_id', '=', target.id).execute(),
    ).toEqual([]);
    expect(
      await db.selectFrom('chunks').select('id').where('kb_id', '=', target.id).execute(),
    ).toEqual([]);
    if (dialect.name === 'sqlite') {
      const { rows } = await sql<{
        rowid: number;
      }>`select rowid from chunks_fts where chunks_fts match 'quokkas'`.execute(db);
      expect(rows).toEqual([]);
    }
  });

  it('lists knowledge bases newest first, with paging', async () => {
    const first = await createKnowledgeBase({ name: 'Paging one' });
    // Creation times are kept to the millisecond; newer must mean later.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await createKnowledgeBase({ name: 'Paging two' });
    const response = await call('GET', '/v1/knowledge-bases?limit=2&offset=0');
    expect(response.statusCode).toBe(200);
    const page = response.json<{
      knowledge_bases: KnowledgeBaseJson[];
      total: number;
      limit: number;
      offset: number;
    }>();
    expect(page.knowledge_bases.map((entry) => entry.id)).toEqual([second.id, first.id]);
    expect(page.total).toBeGreaterThanOrEqual(3);
    expect(page).toMatchObject({ limit: 2, offset: 0 });
    const next = (await call('GET', '/v1/knowledge-bases?limit=2&offset=2')).json<{
      knowledge_bases: KnowledgeBaseJson[];
    }>();
    expect(next.knowledge_bases.map((entry) => entry.id)).not.toContain(first.id);
  });

  it("keeps every account's knowledge bases and documents to itself (404)", async () => {
    const other = await createAccount(harness.app, harness.adminKey, 'Tenant B');
    const foreignKey = other.admin_key;
    const documentId = documentIds.get('espresso')!;
    for (const [method, url, payload] of [
      ['GET', `/v1/knowledge-bases/${kb.id}`, undefined],
      ['DELETE', `/v1/knowledge-bases/${kb.id}`, undefined],
      ['GET', `/v1/knowledge-bases/${kb.id}/documents`, undefined],
      ['POST', `/v1/knowledge-bases/${kb.id}/documents`, { content: 'Injected text.' }],
      ['DELETE', `/v1/knowledge-bases/${kb.id}/documents/${documentId}`, undefined],
      ['POST', `/v1/knowledge-bases/${kb.id}/search`, { query: 'crema' }],
    ] as const) {
      const response = await call(method, url, payload, foreignKey);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json<ErrorJson>().error).toMatchObject({
        code: 'not_found',
        message: `Knowledge base '${kb.id}' not found.`,
      });
    }
    expect(
      (await call('GET', '/v1/knowledge-bases', undefined, foreignKey)).json<{ total: number }>()
        .total,
    ).toBe(0);
    // Their own knowledge base of the same content is theirs alone, and ours is intact.
    const theirs = await createKnowledgeBase({ name: 'Theirs' }, foreignKey);
    await addDocument(theirs.id, { content: 'Golden crema on their espresso.' }, foreignKey);
    const ours = await search(kb.id, 'crema', 50);
    expect(ours.results.every((result) => result.knowledge_base_id === kb.id)).toBe(true);
    expect((await call('GET', `/v1/knowledge-bases/${theirs.id}`)).statusCode).toBe(404);
    expect(
      (await call('GET', `/v1/knowledge-bases/${kb.id}`)).json<KnowledgeBaseJson>().document_count,
    ).toBeGreaterThanOrEqual(corpus.length);
  });

  it('answers 404 for an unknown knowledge base or document', async () => {
    expect((await call('GET', '/v1/knowledge-bases/kb_missing')).statusCode).toBe(404);
    const response = await call('DELETE', `/v1/knowledge-bases/${kb.id}/documents/doc_missing`);
    expect(response.statusCode).toBe(404);
    expect(response.json<ErrorJson>().error.message).toBe("Document 'doc_missing' not found.");
  });

  it('refuses invalid input with 400s that name the parameter', async () => {
    const cases: [string, unknown, string, string][] = [
      ['/v1/knowledge-bases', { name: '' }, 'name', 'invalid_parameter'],
      ['/v1/knowledge-bases', { name: '   ' }, 'name', 'invalid_parameter'],
      [
        '/v1/knowledge-bases',
        { name: 'x', embedding_model: 'fake-chat' },
        'embedding_model',
        'invalid_parameter',
      ],
      [
        '/v1/knowledge-bases',
        { name: 'x', embedding_model: 'no-such-model' },
        'embedding_model',
        'unknown_model',
      ],
      ['/v1/knowledge-bases', { name: 'x', colour: 'blue' }, 'colour', 'invalid_parameter'],
      [`/v1/knowledge-bases/${kb.id}/documents`, { content: '' }, 'content', 'invalid_parameter'],
      [`/v1/knowledge-bases/${kb.id}/documents`, { title: 'x' }, 'content', 'missing_parameter'],
      [
        `/v1/knowledge-bases/${kb.id}/documents`,
        { content: 'x', content_type: 'application/pdf' },
        'content_type',
        'invalid_parameter',
      ],
      [
        `/v1/knowledge-bases/${kb.id}/documents`,
        { content: '<script>only()</script>', content_type: 'text/html' },
        'content',
        'invalid_parameter',
      ],
      [
        `/v1/knowledge-bases/${kb.id}/documents`,
        { content: 'x'.repeat(5 * 1024 * 1024 + 1) },
        'content',
        'invalid_parameter',
      ],
      [`/v1/knowledge-bases/${kb.id}/search`, { query: '' }, 'query', 'invalid_parameter'],
      [`/v1/knowledge-bases/${kb.id}/search`, { query: '   ' }, 'query', 'invalid_parameter'],
      [`/v1/knowledge-bases/${kb.id}/search`, {}, 'query', 'missing_parameter'],
      [
        `/v1/knowledge-bases/${kb.id}/search`,
        { query: 'x', top_k: 0 },
        'top_k',
        'invalid_parameter',
      ],
      [
        `/v1/knowledge-bases/${kb.id}/search`,
        { query: 'x', top_k: 51 },
        'top_k',
        'invalid_parameter',
      ],
      [
        `/v1/knowledge-bases/${kb.id}/search`,
        { query: 'x', top_k: '5' },
        'top_k',
        'invalid_parameter',
      ],
      [
        `/v1/knowledge-bases/${kb.id}/search`,
        { query: 'x', min_score: 2 },
        'min_score',
        'invalid_parameter',
      ],
    ];
    for (const [url, payload, param, code] of cases) {
      const response = await call('POST', url, payload);
      const label = `${url} ${JSON.stringify(payload).slice(0, 80)}`;
      expect(response.statusCode, `${label}: ${response.body.slice(0, 300)}`).toBe(400);
      expect(response.json<ErrorJson>().error, label).toMatchObject({ param, code });
    }
    const tooLarge = (
      await call('POST', `/v1/knowledge-bases/${kb.id}/documents`, {
        content: 'x'.repeat(5 * 1024 * 1024 + 1),
      })
    ).json<ErrorJson>();
    expect(tooLarge.error.message).toContain('5 MiB');
    const listing = await call('GET', `/v1/knowledge-bases/${kb.id}/documents?limit=0`);
    expect(listing.statusCode).toBe(400);
  });

  it('needs agents:read to read and search, agents:write to change', async () => {
    const reader = (await createKey(harness.app, harness.adminKey, { scopes: ['agents:read'] }))
      .key;
    const writer = (await createKey(harness.app, harness.adminKey, { scopes: ['agents:write'] }))
      .key;
    expect((await call('GET', '/v1/knowledge-bases', undefined, reader)).statusCode).toBe(200);
    expect(
      (await call('GET', `/v1/knowledge-bases/${kb.id}/documents`, undefined, reader)).statusCode,
    ).toBe(200);
    expect(
      (await call('POST', `/v1/knowledge-bases/${kb.id}/search`, { query: 'crema' }, reader))
        .statusCode,
    ).toBe(200);
    for (const [method, url, payload] of [
      ['POST', '/v1/knowledge-bases', { name: 'x' }],
      ['DELETE', `/v1/knowledge-bases/${kb.id}`, undefined],
      ['POST', `/v1/knowledge-bases/${kb.id}/documents`, { content: 'x' }],
      ['DELETE', `/v1/knowledge-bases/${kb.id}/documents/${documentIds.get('rust')!}`, undefined],
    ] as const) {
      const response = await call(method, url, payload, reader);
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json<ErrorJson>().error.required_scope).toBe('agents:write');
    }
    const created = await createKnowledgeBase({ name: 'By writer' }, writer);
    expect(
      (await call('GET', `/v1/knowledge-bases/${created.id}`, undefined, writer)).statusCode,
    ).toBe(403);
    expect(
      (
        await call('POST', `/v1/knowledge-bases/${created.id}/search`, { query: 'x' }, writer)
      ).json<ErrorJson>().error.required_scope,
    ).toBe('agents:read');
  });
});

describe.each(allDialects)('knowledge bases without an embedding model on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    // A catalog with a chat model only: nothing can embed.
    harness = await startTestApp({
      dialect,
      overrides: {
        default_model: 'only-chat',
        models: [
          {
            name: 'only-chat',
            provider: 'openai-compatible',
            model: 'gpt-4o-mini',
            base_url: 'http://127.0.0.1:9/v1',
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('creates keyword-only knowledge bases whose search says why', async () => {
    const headers = bearer(harness.adminKey);
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases',
      headers,
      payload: { name: 'Plain' },
    });
    expect(created.statusCode).toBe(201);
    const knowledgeBase = created.json<KnowledgeBaseJson>();
    expect(knowledgeBase).toMatchObject({ embedding_model: null, search_mode: 'bm25' });
    for (const content of [
      'Glaciers carve valleys over thousands of years.',
      'Deserts get less than 250 millimetres of rain a year.',
    ]) {
      const added = await harness.app.inject({
        method: 'POST',
        url: `/v1/knowledge-bases/${knowledgeBase.id}/documents`,
        headers,
        payload: { content },
      });
      expect(added.json<DocumentJson>()).toMatchObject({
        embedding_status: 'none',
        chunk_count: 1,
      });
    }
    const response = await harness.app.inject({
      method: 'POST',
      url: `/v1/knowledge-bases/${knowledgeBase.id}/search`,
      headers,
      payload: { query: 'how do glaciers carve valleys', top_k: 5 },
    });
    const found = response.json<SearchJson>();
    expect(found.mode).toBe('bm25');
    expect(found.notice).toContain('Semantic search is off');
    expect(found.results).toHaveLength(1);
    expect(found.results[0]).toMatchObject({
      title: 'Glaciers carve valleys over thousands of years.',
      score: 1,
      keyword_rank: 1,
      vector_rank: null,
    });
  });
});
