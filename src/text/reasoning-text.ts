// A plain-text answer read as steps and a conclusion (ReasoningAgent's reading of a model that
// ignored the schema). Its Markdown is read by the service's lexer, so on model output a client can
// shape it runs in the text worker threads (AgentRunContext.text).
import { markdownLine } from './markdown-text.js';
import { plainTextBlocks } from './plain-text.js';
import { splitSentences } from './sentences.js';

export interface ReasoningAnswer {
  steps: string[];
  conclusion: string;
}

// A line or sentence that states the conclusion; a label followed by a colon is not part of it.
const conclusionLabel =
  /^(?:(?:in )?conclusion|(?:final )?answer|result|therefore|thus|hence|so)\b\s*([:：]?)\s*/i;

/**
 * A plain-text answer read as steps and a conclusion: its paragraphs and list items (a single
 * paragraph: its sentences) are the steps; the conclusion is the last one labelled as such
 * ("Conclusion:", "Answer:", "Therefore …"), else the last one.
 */
export function parseReasoningText(
  text: string,
  options: { markdown: boolean } = { markdown: true },
): ReasoningAnswer {
  const blocks = plainTextBlocks(text)
    // Without `markdown`, lines are taken as written (whitespace collapsed), markup and all.
    .map((block) =>
      options.markdown ? markdownLine(block.text) : block.text.replace(/\s+/g, ' ').trim(),
    )
    .filter((block) => block !== '');
  const units = blocks.length === 1 ? splitSentences(blocks[0]!) : blocks;
  if (units.length === 0) return { steps: [], conclusion: text.trim() };
  let index = units.findLastIndex((unit) => conclusionLabel.test(unit));
  if (index === -1) index = units.length - 1;
  const unit = units[index]!;
  const label = conclusionLabel.exec(unit);
  // "Conclusion:" takes its label off; "Therefore, …" is a sentence of its own.
  let conclusion = label !== null && label[1] !== '' ? unit.slice(label[0].length) : unit;
  let after = units.slice(index + 1);
  if (conclusion === '') {
    // A "Conclusion:" line alone: what follows it is the conclusion.
    conclusion = after.join(' ');
    after = [];
  }
  return { steps: [...units.slice(0, index), ...after], conclusion: conclusion || unit };
}
