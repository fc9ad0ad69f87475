// ReasoningAgent: works a problem in explicit steps and concludes, through structured output
// (a JSON Schema the model is constrained to where the back-end can, and always validated); a
// model that answers in plain text anyway has its answer split into steps and a conclusion.
import type { JSONSchema7 } from '@ai-sdk/provider';
import Type from 'typebox';
import { MissingParameterError } from '../../../errors/app-error.js';
import type { ReasoningAnswer } from '../../../text/reasoning-text.js';
import type { AgentType } from '../agent-type.js';

export interface ReasoningConfiguration {
  processing_steps?: string[];
  max_steps: number;
  instructions?: string;
  temperature?: number;
}

const configurationSchema = Type.Object(
  {
    processing_steps: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 20,
        description:
          'Names of the steps to work through, in order (e.g. "Identify the givens", "Compute"). Without them the model chooses its steps.',
      }),
    ),
    max_steps: Type.Integer({
      minimum: 1,
      maximum: 20,
      default: 8,
      description: 'Most steps when processing_steps is not given.',
    }),
    instructions: Type.Optional(
      Type.String({ maxLength: 4000, description: 'Extra guidance for every run.' }),
    ),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);

const parametersSchema = Type.Object(
  {
    context: Type.Optional(
      Type.String({ maxLength: 100_000, description: 'Facts or data the problem refers to.' }),
    ),
  },
  { additionalProperties: false },
);

function answerSchema(configuration: ReasoningConfiguration): JSONSchema7 {
  const count = configuration.processing_steps?.length;
  return {
    type: 'object',
    properties: {
      steps: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        minItems: count ?? 1,
        maxItems: count ?? configuration.max_steps,
      },
      conclusion: { type: 'string', minLength: 1 },
    },
    required: ['steps', 'conclusion'],
    additionalProperties: false,
  };
}

export type { ReasoningAnswer };

export const reasoningAgent: AgentType<ReasoningConfiguration> = {
  id: 'ReasoningAgent',
  name: 'Reasoning agent',
  description:
    'Works a problem through explicit, numbered steps and states a conclusion. Needs a model; the answer is structured output ({steps, conclusion, structured: true}). A model that answers in plain text despite the schema (some OpenAI-compatible servers ignore it) is asked once more, then its text is split into steps and a conclusion, flagged `structured: false` with a `notice`.',
  capabilities: ['logical_reasoning', 'problem_solving'],
  configurationSchema,
  parametersSchema,
  validateInput(input) {
    if (input.query === undefined || input.query.trim() === '') {
      throw new MissingParameterError(
        'query',
        "'query' (the problem to reason about) is required.",
      );
    }
  },
  async run(context, configuration, input, parameters) {
    if (!context.models.available()) throw context.models.unavailableError('ReasoningAgent');
    const steps = configuration.processing_steps;
    const plan =
      steps === undefined
        ? `Use at most ${configuration.max_steps} steps.`
        : `Work through exactly these steps, one array item each, in this order:\n${steps
            .map((step, index) => `${index + 1}. ${step}`)
            .join('\n')}`;
    const contextText =
      typeof parameters.context === 'string' ? `\n\nContext:\n${parameters.context}` : '';
    const answer = await context.models.structured<ReasoningAnswer>(
      {
        system: [
          'You reason carefully and explicitly. Break the problem into steps; each step states what it establishes and why. Do not skip steps or assert what you have not shown. Then give a conclusion that follows from the steps.',
          plan,
          configuration.instructions ?? '',
        ]
          .filter((part) => part !== '')
          .join('\n\n'),
        user: `Problem: ${input.query ?? ''}${contextText}`,
        temperature: configuration.temperature ?? 0.2,
      },
      answerSchema(configuration),
    );
    if (!answer.structured) {
      return {
        ...(await context.text.reasoningText(answer.text)),
        structured: false,
        notice: `${answer.reason}. The steps and conclusion were read from its plain-text answer.`,
      };
    }
    return {
      steps:
        steps === undefined
          ? answer.value.steps
          : answer.value.steps.map((text, index) =>
              text.toLowerCase().startsWith(steps[index]!.toLowerCase())
                ? text
                : `${steps[index]!}: ${text}`,
            ),
      conclusion: answer.value.conclusion,
      structured: true,
    };
  },
};
