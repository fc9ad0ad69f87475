// PipelineRunner directly, on every dialect: stages run in order with their inputs mapped from the
// run and earlier stages and their outputs mapped for later ones, every step recorded; a failing
// stage (an upstream error, an input that resolves to nothing) stops the run and skips the rest;
// retries; and detached runs carried by the in-process job queue. Agents call the real
// openai-compatible provider against the fake upstream().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../../../test/support/dialects.js';
import { TestClock } from '../../../test/support/unit/clock.js';
import { appErrorOf } from '../../../test/support/unit/errors.js';
import {
  fakeUpstreamForFile,
  openChatStack,
  type ChatStack,
} from '../../../test/support/unit/models.js';
import { pipelineStack, type PipelineStack } from '../../../test/support/unit/pipelines.js';
import { insertAccount } from '../../../test/support/unit/storage.js';
import type { Account } from '../accounts/account.js';
import type { PipelineRunOptions } from './pipeline-runner.js';
import type { StageInput } from './pipeline-service.js';

const upstream = fakeUpstreamForFile();

/** The user text of each request the upstream received, in order. */
function sentQueries(): string[] {
  return upstream().requests.map((request) => {
    const { messages } = request.body as { messages: Array<{ role: string; content: string }> };
    return messages.findLast((message) => message.role === 'user')?.content ?? '';
  });
}

describe.each(allDialects)('PipelineRunner on $name', (dialect) => {
  let chat: ChatStack;
  let stack: PipelineStack;
  let account: Account;
  let writer = '';

  beforeAll(async () => {
    const clock = new TestClock();
    chat = await openChatStack(dialect, upstream(), clock);
    stack = await pipelineStack({ ...chat, clock });
    account = await insertAccount(chat.unit.storage);
    // One try per stage (no fallback model), so a scripted upstream error fails the stage.
    writer = (
      await stack.agents.create(account.id, {
        name: 'writer',
        agentType: 'GenerationAgent',
        configuration: { format: 'text' },
        modelId: 'unit-alone',
      })
    ).id;
  });
  afterAll(async () => {
    await stack.close();
    await chat.close();
  });

  const runOptions = (detach = false): PipelineRunOptions => ({
    conversationId: null,
    userId: null,
    detach,
    signal: new AbortController().signal,
  });
  const stage = (name: string, fields: Partial<StageInput> = {}): StageInput => ({
    name,
    agent_id: writer,
    ...fields,
  });
  const pipeline = async (...stages: StageInput[]) =>
    (await stack.pipelines.create(account.id, { name: 'flow', stages })).id;

  it('runs stages in order, each fed by the inputs and the outputs before it', async () => {
    const id = await pipeline(
      stage('draft', {
        input_mapping: { query: '$.input.topic' },
        output_mapping: { draft: '$.output.text' },
      }),
      stage('polish', { input_mapping: { query: '$.stages.draft.draft' } }),
    );
    const result = await stack.runner.start(account.id, id, { topic: 'green tea' }, runOptions());
    expect(sentQueries()).toEqual(['green tea', 'Echo: green tea']);
    expect(result.stagesCompleted).toBe(2);
    expect(result.execution).toMatchObject({
      status: 'completed',
      pipelineId: id,
      input: { topic: 'green tea' },
      output: { text: 'Echo: Echo: green tea', format: 'text', word_count: 4 },
      error: null,
    });
    const { stages } = await stack.executions.get(account.id, result.execution.id);
    expect(
      stages.map(({ name, status, attempts, input }) => ({ name, status, attempts, input })),
    ).toEqual([
      { name: 'draft', status: 'completed', attempts: 1, input: { query: 'green tea' } },
      { name: 'polish', status: 'completed', attempts: 1, input: { query: 'Echo: green tea' } },
    ]);
    expect(stages[0]!.output).toMatchObject({ text: 'Echo: green tea', draft: 'Echo: green tea' });
    expect(result.execution.tokensUsed).toBe(stages[0]!.tokensUsed + stages[1]!.tokensUsed);
    expect(result.execution.tokensUsed).toBeGreaterThan(0);
  });

  it('stops at a stage the upstream fails, naming it, and skips the rest', async () => {
    const id = await pipeline(
      stage('first', { input_mapping: { query: '$.input.text' } }),
      stage('second', { input_mapping: { query: '$.stages.first.text' } }),
      stage('third', { input_mapping: { query: '$.stages.second.text' } }),
    );
    upstream().enqueue({ kind: 'reply' }, { kind: 'error', status: 500 });
    const result = await stack.runner.start(account.id, id, { text: 'hello' }, runOptions());
    expect(result.stagesCompleted).toBe(1);
    expect(result.execution).toMatchObject({
      status: 'failed',
      output: null,
      error: { code: 'upstream_error', stage: 'second' },
    });
    expect(result.execution.error?.message).toMatch(/^stage 'second' failed: /);
    const { stages } = await stack.executions.get(account.id, result.execution.id);
    expect(stages.map((record) => [record.name, record.status, record.attempts])).toEqual([
      ['first', 'completed', 1],
      ['second', 'failed', 1],
      ['third', 'skipped', 0],
    ]);
    expect(stages[1]!.error).toMatchObject({ code: 'upstream_error' });
    expect(upstream().requests).toHaveLength(2);
  });

  it('fails a stage whose input resolves to nothing, before calling its agent', async () => {
    const id = await pipeline(
      stage('first', { input_mapping: { query: '$.input.text' } }),
      stage('second', { input_mapping: { query: '$.stages.first.summary' } }),
    );
    const result = await stack.runner.start(account.id, id, { text: 'hello' }, runOptions());
    expect(result.execution.error).toMatchObject({
      code: 'unresolved_path',
      stage: 'second',
      path: '$.stages.first.summary',
      message:
        "stage 'second' failed: input 'query' resolves to nothing: $.stages.first.summary (stage 'first' has no 'summary')",
    });
    expect(upstream().requests).toHaveLength(1);
  });

  it('retries a failing stage as configured, and says how often it tried', async () => {
    const id = await pipeline(
      stage('steady', { input_mapping: { query: '$.input.text' }, retries: 1 }),
      stage('flaky', { input_mapping: { query: '$.input.text' }, retries: 1 }),
    );
    upstream().enqueue(
      { kind: 'error', status: 500 },
      { kind: 'reply' },
      { kind: 'error', status: 500 },
      { kind: 'error', status: 500 },
    );
    const result = await stack.runner.start(account.id, id, { text: 'again' }, runOptions());
    const { stages } = await stack.executions.get(account.id, result.execution.id);
    expect(stages.map((record) => [record.status, record.attempts])).toEqual([
      ['completed', 2],
      ['failed', 2],
    ]);
    expect(stages[1]!.error?.message).toMatch(/ \(after 2 attempts\)$/);
    expect(upstream().requests).toHaveLength(4);
  });

  it('runs a detached run through the job queue, from the plan stored with it', async () => {
    const id = await pipeline(
      stage('draft', { input_mapping: { query: '$.input.topic' } }),
      stage('polish', { input_mapping: { query: '$.stages.draft.text' } }),
    );
    const started = await stack.runner.start(account.id, id, { topic: 'tea' }, runOptions(true));
    // Listening now is in time: the run cannot end before its first model call is answered.
    const ended = stack.jobEnded(started.execution.id);
    expect(started).toMatchObject({ stagesCompleted: 0, execution: { status: 'running' } });
    expect(await stack.executions.runPlanOf(started.execution.id)).toMatchObject({
      pipelineId: id,
      stages: [{ name: 'draft' }, { name: 'polish' }],
    });
    expect(await ended).toEqual({ executionId: started.execution.id, accountId: account.id });
    const { execution, stages } = await stack.executions.get(account.id, started.execution.id);
    expect(execution).toMatchObject({ status: 'completed', output: { text: 'Echo: Echo: tea' } });
    expect(stages.map((record) => record.status)).toEqual(['completed', 'completed']);
    expect(stack.jobErrors).toEqual([]);
  });

  it('refuses a run it cannot start, recording nothing', async () => {
    const empty = (await stack.pipelines.create(account.id, { name: 'empty' })).id;
    const noStages = await appErrorOf(stack.runner.start(account.id, empty, {}, runOptions()));
    expect(noStages).toMatchObject({ code: 'invalid_parameter', param: 'stages' });
    const other = await insertAccount(chat.unit.storage);
    const id = await pipeline(stage('only', { input_mapping: { query: '$.input.text' } }));
    const foreign = await appErrorOf(stack.runner.start(other.id, id, {}, runOptions()));
    expect(foreign).toMatchObject({ code: 'not_found', status: 404 });
    const reserved = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const unsafe = await appErrorOf(stack.runner.start(account.id, id, reserved, runOptions()));
    expect(unsafe.status).toBe(400);
    const listed = await stack.executions.listForPipeline(account.id, id, { limit: 10, offset: 0 });
    expect(listed.total).toBe(0);
    expect(upstream().requests).toHaveLength(0);
  });
});
