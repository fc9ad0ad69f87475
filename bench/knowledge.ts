// Benchmark: knowledge-base ingestion and search on SQLite, in process (the service API, no HTTP).
// A generated corpus of 10,000+ chunks is ingested twice — keyword-only (no embedding server) and
// with vectors from the fake OpenAI-compatible upstream on loopback — then a few hundred varied
// queries are timed one at a time. Target: BM25-only search p50 under 10 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { loadConfig } from '../src/config/load-config.js';
import { createServices, type ServiceContainer } from '../src/services.js';
import { fts5Query } from '../src/storage/dialects/sqlite-knowledge.js';
import { startFakeUpstream } from '../test/support/fake-upstream.js';
import { machine, writeResults } from './support.js';

const documentCount = Number(process.env.BENCH_DOCUMENTS ?? 1200);
const queryCount = Number(process.env.BENCH_QUERIES ?? 300);
const dimensions = Number(process.env.BENCH_DIMENSIONS ?? 384);
const targetP50Ms = 10;

/** Mulberry32: a small seeded generator, so every run ingests and asks the same things. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const random = seededRandom(20_261_123);
const syllables =
  'ka lo mi ne ru sa te vi zo pa de fi gu ha jo ki le mo nu po ri su ta ve wo xa yu ze'.split(' ');
const commonWords = 'the of and to in is that for it as with on by this be are from at or an'.split(
  ' ',
);

function makeWord(): string {
  const length = 2 + Math.floor(random() * 3);
  return Array.from({ length }, () => syllables[Math.floor(random() * syllables.length)]!).join('');
}

// 20,000 distinct words with a Zipf-like frequency: a few very common, most rare.
const vocabulary = [...new Set(Array.from({ length: 26_000 }, makeWord))].slice(0, 20_000);
function zipfWord(): string {
  const rank = Math.floor(vocabulary.length ** random());
  return vocabulary[Math.min(rank, vocabulary.length - 1)]!;
}

function sentence(): string {
  const words = Array.from({ length: 8 + Math.floor(random() * 14) }, () =>
    random() < 0.3 ? commonWords[Math.floor(random() * commonWords.length)]! : zipfWord(),
  );
  const text = words.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

/** A Markdown document of four sections, ~12,000 characters: about ten chunks of 1,200. */
function markdownDocument(index: number): { title: string; content: string } {
  const title = `Document ${index}: ${zipfWord()} ${zipfWord()}`;
  const sections = Array.from({ length: 4 }, (_, sectionIndex) => {
    const paragraphs = Array.from({ length: 5 }, () =>
      Array.from({ length: 5 }, sentence).join(' '),
    );
    return `## Section ${sectionIndex + 1} ${zipfWord()}\n\n${paragraphs.join('\n\n')}`;
  });
  return { title, content: `# ${title}\n\n${sections.join('\n\n')}\n` };
}

/** Queries of 1–6 words: rare and common words, stop words, punctuation and FTS-like syntax. */
function makeQuery(index: number): string {
  const words = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
    random() < 0.2 ? commonWords[Math.floor(random() * commonWords.length)]! : zipfWord(),
  );
  switch (index % 5) {
    case 0:
      return `"${words.join(' ')}`;
    case 1:
      return `${words.join(' AND ')}?`;
    default:
      return words.join(' ');
  }
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

interface Phase {
  mode: 'bm25' | 'hybrid';
  knowledgeBaseId: string;
  documents: number;
  chunks: number;
  seconds: number;
  documentsPerSecond: number;
  chunksPerSecond: number;
  search: { queries: number; p50Ms: number; p90Ms: number; p99Ms: number; meanMs: number };
  resultsPerQuery: number;
}

async function runPhase(
  services: ServiceContainer,
  accountId: string,
  mode: 'bm25' | 'hybrid',
  documents: readonly { title: string; content: string }[],
  queries: readonly string[],
): Promise<Phase> {
  const knowledgeBase = await services.knowledge.createKnowledgeBase(accountId, {
    name: `bench ${mode}`,
    embeddingModel: mode === 'bm25' ? null : 'bench-embed',
  });
  let chunks = 0;
  const started = process.hrtime.bigint();
  for (const document of documents) {
    const stored = await services.knowledge.addDocument(accountId, knowledgeBase.id, {
      ...document,
      contentType: 'text/markdown',
    });
    if (stored.embeddingStatus !== (mode === 'bm25' ? 'none' : 'complete')) {
      throw new Error(`unexpected embedding status ${stored.embeddingStatus}`);
    }
    chunks += stored.chunkCount;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;

  // Warm the statement cache and the page cache, then time each query alone.
  for (const query of queries.slice(0, 20)) {
    await services.knowledge.search(accountId, [knowledgeBase.id], query, { topK: 10 });
  }
  const timings: number[] = [];
  let results = 0;
  for (const query of queries) {
    const start = process.hrtime.bigint();
    const found = await services.knowledge.search(accountId, [knowledgeBase.id], query, {
      topK: 10,
    });
    timings.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (found.mode !== mode) throw new Error(`search ran in ${found.mode} mode, not ${mode}`);
    results += found.results.length;
  }
  const sorted = [...timings].sort((a, b) => a - b);
  return {
    mode,
    knowledgeBaseId: knowledgeBase.id,
    documents: documents.length,
    chunks,
    seconds: round(seconds),
    documentsPerSecond: round(documents.length / seconds, 1),
    chunksPerSecond: round(chunks / seconds, 0),
    search: {
      queries: queries.length,
      p50Ms: round(percentile(sorted, 0.5), 3),
      p90Ms: round(percentile(sorted, 0.9), 3),
      p99Ms: round(percentile(sorted, 0.99), 3),
      meanMs: round(timings.reduce((sum, value) => sum + value, 0) / timings.length, 3),
    },
    resultsPerQuery: round(results / queries.length, 1),
  };
}

export async function runKnowledgeBenchmark(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-knowledge-'));
  const upstream = await startFakeUpstream({
    recordRequests: false,
    embeddingDimensions: dimensions,
  });
  const adminKey = generateApiKey();
  const config = loadConfig({
    env: {
      DATABASE_URL: `sqlite:${path.join(directory, 'platform.db')}`,
      LOG_LEVEL: 'silent',
      PLATFORM_ADMIN_KEY: adminKey,
      BENCH_UPSTREAM_KEY: 'sk-bench',
    },
    overrides: {
      default_model: 'bench-chat',
      models: [
        {
          name: 'bench-chat',
          provider: 'openai-compatible',
          model: 'gpt-4o-mini',
          base_url: upstream.baseUrl,
          api_key_env: 'BENCH_UPSTREAM_KEY',
        },
        {
          name: 'bench-embed',
          type: 'embedding',
          provider: 'openai-compatible',
          model: 'text-embedding-3-small',
          base_url: upstream.baseUrl,
          api_key_env: 'BENCH_UPSTREAM_KEY',
        },
      ],
    },
  });
  const services = await createServices(config, pino({ level: 'silent' }));
  try {
    await services.accounts.bootstrap(config.auth.adminKey);
    const { accountId } = await services.authenticator.authenticate(adminKey, '127.0.0.1');
    const documents = Array.from({ length: documentCount }, (_, index) => markdownDocument(index));
    const queries = Array.from({ length: queryCount }, (_, index) => makeQuery(index));
    const bm25 = await runPhase(services, accountId, 'bm25', documents, queries);
    const hybrid = await runPhase(services, accountId, 'hybrid', documents, queries);
    const passed = bm25.search.p50Ms < targetP50Ms;
    let matched = 0;
    for (const query of queries) {
      const match = fts5Query([bm25.knowledgeBaseId], query);
      if (match === null) continue;
      const { rows } = await sql<{
        count: number;
      }>`select count(*) as count from chunks_fts where chunks_fts match ${match}`.execute(
        services.storage.db,
      );
      matched += rows[0]?.count ?? 0;
    }
    const matchedShare = round((100 * matched) / queries.length / bm25.chunks, 0);

    const json = {
      benchmark: 'knowledge',
      date: new Date().toISOString(),
      machine: machine(),
      settings: {
        database: 'SQLite (file, WAL)',
        chunk_size: config.knowledge.chunkSize,
        chunk_overlap: config.knowledge.chunkOverlap,
        top_k: 10,
        embedding_dimensions: dimensions,
      },
      target: { bm25_search_p50_ms_below: targetP50Ms, passed },
      queries_match_percent_of_chunks: matchedShare,
      phases: [bm25, hybrid],
    };
    const row = (phase: Phase) =>
      `| ${phase.mode} | ${phase.documents} | ${phase.chunks} | ${phase.seconds} | ${phase.documentsPerSecond} | ${phase.chunksPerSecond} | ${phase.search.p50Ms} | ${phase.search.p90Ms} | ${phase.search.p99Ms} | ${phase.resultsPerQuery} |`;
    const { cpus, cpu_model: cpuModel, node } = json.machine;
    const markdown = `# Knowledge benchmark — ${json.date}

\`npm run bench -- knowledge\` · ${cpus} cores (${cpuModel}), Node ${node} · SQLite file in WAL mode,
in process through \`services.knowledge\` (no HTTP). Chunks of ${config.knowledge.chunkSize} characters
with ${config.knowledge.chunkOverlap} of overlap; ${queryCount} queries of 1–6 words (rare and common words, stop
words, stray quotes and \`AND\`), timed one at a time, top_k 10.

| mode | documents | chunks | ingest s | documents/s | chunks/s | search p50 ms | p90 ms | p99 ms | results/query |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${row(bm25)}
${row(hybrid)}

Target: BM25-only search p50 under ${targetP50Ms} ms — **${passed ? 'met' : 'NOT met'}**.

The words follow a Zipf-like distribution over 20,000 made-up words, so the commonest appear in
most chunks: a query matches ${matchedShare}% of the chunks on average, and all of them are ranked.

- **bm25**: a knowledge base without an embedding model; ingestion is extraction, chunking and the
  inserts (chunks, FTS5 index through triggers) in one transaction per document; search is the FTS5
  match ranked by \`bm25()\`, fusion, and reading the 10 chunks with their documents.
- **hybrid**: the same corpus with ${dimensions}-dimensional vectors from the fake OpenAI-compatible
  upstream (bag-of-words vectors, served over loopback HTTP in this process: ingestion includes the
  embedding requests, 64 chunks per request, 4 requests in flight). Each search embeds the query (one loopback request) and
  ranks every chunk of the knowledge base by \`vec_distance_cosine\` (sqlite-vec, exact scan), then
  fuses both rankings.
`;
    const file = writeResults('knowledge', json, markdown);
    process.stdout.write(`\n${markdown}\nwritten to ${file}\n`);
    if (!passed) process.exitCode = 1;
  } finally {
    await services.close();
    await upstream.close();
    rmSync(directory, { recursive: true, force: true });
  }
}
