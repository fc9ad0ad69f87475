// Prompt templates: the three built-in ones of the spec plus any the config file adds, the
// validation of a conversation's variables, and the rendering of the system prompt.
import Mustache from 'mustache';
import type { TemplateDefinition } from '../../config/config.js';
import { AppError, InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import { assertSafeName, ownValue } from '../../validation/safe-keys.js';

const additionalInstructions = {
  name: 'additional_instructions',
  required: false,
  description: 'Extra instructions appended to the prompt, e.g. house style or things to avoid.',
  default: null,
};

export const builtInTemplates: readonly TemplateDefinition[] = [
  {
    name: 'standard_assistant',
    displayName: 'Standard assistant',
    description:
      'A helpful, honest general-purpose assistant that answers clearly and says when it does not know.',
    systemPrompt: `You are a helpful, knowledgeable assistant.

How to answer:
- Answer the question that was asked, directly, then add only the detail that helps.
- Be accurate. If you are not sure, say so; if you do not know, say that instead of guessing. Never invent facts, quotations, numbers or sources.
- Keep answers as short as they can be while still complete. Use lists or short sections when they make an answer easier to read, and plain prose otherwise.
- If a request is ambiguous, state the interpretation you chose, or ask one short clarifying question when the answer would differ a lot.
- Write in the language the user writes in.
- Decline requests that would cause harm, briefly and without lecturing, and offer a safe alternative when there is one.{{#additional_instructions}}

Additional instructions:
{{additional_instructions}}{{/additional_instructions}}`,
    variables: [additionalInstructions],
    exampleUsage:
      '{"template_name": "standard_assistant", "variables": {"additional_instructions": "Prefer metric units."}}',
  },
  {
    name: 'expert_assistant',
    displayName: 'Domain expert',
    description:
      'An expert in a chosen domain who reasons carefully, states assumptions and adapts depth to the audience.',
    systemPrompt: `You are a senior expert in {{domain}}, advising {{audience}}.

How to answer:
- Bring real expertise: name the relevant concepts, standards, trade-offs and common pitfalls of {{domain}}, and explain why, not only what.
- Reason step by step for non-trivial questions, and state the assumptions you make. When information is missing and it matters, say what you would need to know.
- Distinguish established practice from your judgement, and flag where experts disagree or where the answer depends on jurisdiction, version or context.
- Be precise with terms, figures and units. Do not invent citations, statistics or specifications; if you are not certain, say how the user can verify it.
- Point out risks (safety, legal, financial, security) when they are relevant, and recommend a qualified professional when the question needs one.
- Match depth to the question: a short answer for a simple question, a structured one (summary first, then details) for a complex one.{{#additional_instructions}}

Additional instructions:
{{additional_instructions}}{{/additional_instructions}}`,
    variables: [
      {
        name: 'domain',
        required: false,
        description:
          'The field of expertise, e.g. "tax law in Germany" or "PostgreSQL performance".',
        default: 'the field the user asks about',
      },
      {
        name: 'audience',
        required: false,
        description: 'Who is asking, e.g. "beginners" or "hospital pharmacists".',
        default: 'a professional audience',
      },
      additionalInstructions,
    ],
    exampleUsage:
      '{"template_name": "expert_assistant", "variables": {"domain": "PostgreSQL performance", "audience": "backend developers"}}',
  },
  {
    name: 'customer_support_assistant',
    displayName: 'Customer support agent',
    description:
      "A friendly support agent for a company's customers that solves problems step by step and knows when to hand over to a human.",
    systemPrompt: `You are a customer support agent for {{company_name}}{{#product_name}}, helping customers with {{product_name}}{{/product_name}}.

How to help:
- Be warm, patient and professional. Acknowledge the customer's problem in one sentence, then help solve it.
- Ask for the details you need (order number, device, error message, what they already tried) before proposing a fix, one or two questions at a time.
- Give numbered, concrete steps the customer can follow, and check whether they worked.
- Only state policies, prices, dates and features you have been told about. If you do not know, say so and explain how the customer can find out or reach a human agent; never make promises on the company's behalf.
- Never ask for passwords, full card numbers or other secrets.
- If the customer is upset, asks for a person, or the issue involves billing disputes, safety, legal matters or account security, offer to escalate to a human agent{{#support_hours}} (available {{support_hours}}){{/support_hours}}{{#support_contact}} at {{support_contact}}{{/support_contact}}.
- Keep replies short and easy to scan; end by asking whether there is anything else you can help with.{{#additional_instructions}}

Additional instructions:
{{additional_instructions}}{{/additional_instructions}}`,
    variables: [
      {
        name: 'company_name',
        required: false,
        description: 'The company the agent works for.',
        default: 'this company',
      },
      {
        name: 'product_name',
        required: false,
        description: 'The product or service the customers use; left out when not given.',
        default: null,
      },
      {
        name: 'support_hours',
        required: false,
        description:
          'When human agents are available, e.g. "Mon–Fri 9:00–17:00 CET"; left out when not given.',
        default: null,
      },
      {
        name: 'support_contact',
        required: false,
        description: 'How to reach a human agent, e.g. an e-mail address; left out when not given.',
        default: null,
      },
      additionalInstructions,
    ],
    exampleUsage:
      '{"template_name": "customer_support_assistant", "variables": {"company_name": "Acme Cloud", "product_name": "Acme Backup", "support_hours": "24/7"}}',
  },
];

/** The largest value a template variable may take. */
export const maxVariableLength = 10_000;

export class TemplateCatalog {
  private readonly byName: Map<string, TemplateDefinition>;

  /** Configured templates are added; one with a built-in name replaces it. */
  constructor(configured: readonly TemplateDefinition[]) {
    this.byName = new Map(builtInTemplates.map((template) => [template.name, template]));
    for (const template of configured) this.byName.set(template.name, template);
  }

  list(): TemplateDefinition[] {
    return [...this.byName.values()];
  }

  find(name: string): TemplateDefinition | undefined {
    return this.byName.get(name);
  }

  /** 400 `unknown_template` naming the parameter when there is no such template. */
  require(name: string, param = 'template_name'): TemplateDefinition {
    const template = this.byName.get(name);
    if (template === undefined) {
      throw new AppError(
        'unknown_template',
        `Template '${name}' does not exist. Known templates: ${[...this.byName.keys()].join(', ')}.`,
        { param },
      );
    }
    return template;
  }

  /** Checks variables against the template: every name known, every required one present. */
  validateVariables(template: TemplateDefinition, variables: Record<string, string>): void {
    const known = new Set(template.variables.map((variable) => variable.name));
    for (const [name, value] of Object.entries(variables)) {
      assertSafeName(name, `variables.${name}`);
      if (!known.has(name)) {
        throw new InvalidParameterError(
          `variables.${name}`,
          `Template '${template.name}' has no variable '${name}'. Its variables: ${[...known].join(', ') || 'none'}.`,
        );
      }
      if (value.length > maxVariableLength) {
        throw new InvalidParameterError(
          `variables.${name}`,
          `'variables.${name}' is longer than ${maxVariableLength} characters.`,
        );
      }
    }
    for (const variable of template.variables) {
      const given = ownValue(variables, variable.name);
      if (variable.required && (typeof given === 'string' ? given : '').trim() === '') {
        throw new MissingParameterError(
          `variables.${variable.name}`,
          `Template '${template.name}' needs the variable '${variable.name}': ${variable.description}`,
        );
      }
    }
  }

  /**
   * The system prompt with the variables filled in (their defaults where none is given); values
   * are text, never escaped or parsed. The view has no prototype and only the template's own
   * variables, so a `{{constructor}}` in a template can never read anything inherited.
   */
  render(template: TemplateDefinition, variables: Record<string, string>): string {
    const values = Object.create(null) as Record<string, string>;
    for (const variable of template.variables) {
      const given = ownValue(variables, variable.name);
      const value = typeof given === 'string' && given.trim() !== '' ? given : variable.default;
      if (value !== null) values[variable.name] = value;
    }
    return Mustache.render(
      template.systemPrompt,
      values,
      {},
      { escape: (value: string) => value },
    ).trim();
  }
}
