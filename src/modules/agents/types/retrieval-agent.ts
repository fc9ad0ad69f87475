// RetrievalAgent: searches the configured knowledge bases and, with a model, answers from the
// passages found — citing them as [1], [2]… — or says it does not know when nothing relevant was.
import Type from 'typebox';
import { MissingParameterError } from '../../../errors/app-error.js';
import type { AgentType, FoundPassage, KnowledgeSearcher } from '../agent-type.js';

export interface RetrievalConfiguration {
  knowledge_base_ids: string[];
  result_count: number;
  min_score: number;
  answer: boolean;
  instructions?: string;
}

const configurationSchema = Type.Object(
  {
    knowledge_base_ids: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: 20,
      description: "Knowledge bases (kb_…) of the agent's account to search.",
    }),
    result_count: Type.Integer({
      minimum: 1,
      maximum: 50,
      default: 5,
      description: 'How many passages to return.',
    }),
    min_score: Type.Number({
      minimum: 0,
      maximum: 1,
      default: 0,
      description: 'Passages scoring below this (0–1, see knowledge-base search) are left out.',
    }),
    answer: Type.Boolean({
      default: true,
      description: 'Write an answer grounded in the passages when a model is available.',
    }),
    instructions: Type.Optional(
      Type.String({ maxLength: 4000, description: 'Extra guidance for the answer.' }),
    ),
  },
  { additionalProperties: false },
);

const parametersSchema = Type.Object(
  {
    result_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    min_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    answer: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Said when the search found nothing that clears min_score: no model is asked to guess. */
export const nothingFoundAnswer =
  "I don't know: nothing in the knowledge bases is relevant to this question.";

function citationsIn(answer: string, passages: readonly FoundPassage[]) {
  const cited = new Set<number>();
  for (const match of answer.matchAll(/\[(\d{1,2})\]/g)) {
    const index = Number(match[1]);
    if (index >= 1 && index <= passages.length) cited.add(index);
  }
  return [...cited]
    .sort((a, b) => a - b)
    .map((index) => ({ index, document_id: passages[index - 1]!.document_id }));
}

export function createRetrievalAgent(
  knowledge: KnowledgeSearcher,
): AgentType<RetrievalConfiguration> {
  return {
    id: 'RetrievalAgent',
    name: 'Retrieval agent',
    description:
      'Finds the passages of its knowledge bases that answer a query (keyword and, with an embedding model, semantic search) and, with a chat model, writes an answer that cites them.',
    capabilities: ['document_retrieval', 'knowledge_base_search'],
    configurationSchema,
    parametersSchema,
    validateInput(input) {
      if (input.query === undefined || input.query.trim() === '') {
        throw new MissingParameterError('query', "'query' (what to look for) is required.");
      }
    },
    async run(context, configuration, input, parameters) {
      const settings = { ...configuration, ...parameters };
      const query = input.query ?? '';
      // The agent's knowledge bases are its owner's, also when another account runs a public agent.
      const found = await knowledge.search(
        context.agent.accountId,
        configuration.knowledge_base_ids,
        query,
        { topK: settings.result_count, minScore: settings.min_score, signal: context.signal },
      );
      const documents = found.results;
      const result: Record<string, unknown> = {
        documents,
        answer: null,
        citations: [],
        search_mode: found.mode,
        ...(found.notice === null ? {} : { notice: found.notice }),
      };
      if (!settings.answer) return result;
      if (documents.length === 0) return { ...result, answer: nothingFoundAnswer };
      if (!context.models.available()) {
        return {
          ...result,
          notice: [found.notice, 'No chat model is available, so no answer was written.']
            .filter((part) => part !== null)
            .join(' '),
        };
      }
      const passages = documents
        .map(
          (document, index) =>
            `[${index + 1}] ${document.title}${document.source === null ? '' : ` (${document.source})`}\n${document.text}`,
        )
        .join('\n\n');
      const answer = await context.models.text({
        system: [
          'Answer the question using only the numbered passages below. Cite the passages you use with their numbers in square brackets, like [1] or [2][3], right after the statement they support.',
          `If the passages do not contain the answer, say exactly: "I don't know based on the available documents." and do not guess.`,
          settings.instructions ?? '',
        ]
          .filter((part) => part !== '')
          .join('\n'),
        user: `Passages:\n${passages}\n\nQuestion: ${query}`,
        temperature: 0.1,
      });
      return { ...result, answer: answer.trim(), citations: citationsIn(answer, documents) };
    },
  };
}
