// The one naming rule of tools: what a wanted name becomes, and how a clash is resolved — by the
// end of an id for an agent or pipeline, by a number for a tool without one.
import { describe, expect, it } from 'vitest';
import { maxToolNameLength, toolNameOf, ToolNames } from './tool-names.js';

describe('toolNameOf', () => {
  it('keeps a valid name as it is', () => {
    for (const name of ['handbook', 'calc__add', '_private', 'a-b_c', 'x__', 'A1']) {
      expect(toolNameOf(name)).toBe(name);
    }
  });

  it('makes each run of other characters one underscore, and drops runs at either end', () => {
    expect(toolNameOf('Haiku writer!')).toBe('Haiku_writer');
    expect(toolNameOf('  Poem: on a topic?  ')).toBe('Poem_on_a_topic');
    expect(toolNameOf('orders__find.order')).toBe('orders__find_order');
    expect(toolNameOf('a .. b')).toBe('a_b');
    expect(toolNameOf('résumé writer')).toBe('r_sum_writer');
    expect(toolNameOf('!!!')).toBe('');
    expect(toolNameOf('')).toBe('');
  });

  it('cuts to 64 characters', () => {
    expect(toolNameOf('x'.repeat(100))).toBe('x'.repeat(maxToolNameLength));
  });
});

describe('ToolNames', () => {
  it('gives an agent or pipeline whose name is taken the end of its id, then its id', () => {
    const names = new ToolNames(['knowledge_search']);
    expect(names.take('Haiku writer!', 'agent_AAAAAAAA11111111')).toBe('Haiku_writer');
    expect(names.take('Haiku writer?', 'agent_BBBBBBBB22222222')).toBe('Haiku_writer_22222222');
    // The end of the id is taken too (an object named so): the whole id.
    expect(names.take('Haiku_writer_33333333', 'pipe_x')).toBe('Haiku_writer_33333333');
    expect(names.take('Haiku writer', 'agent_CCCCCCCC33333333')).toBe('agent_CCCCCCCC33333333');
    // A name held beside the tools (knowledge_search on /mcp) is taken as well.
    expect(names.take('knowledge search', 'agent_DDDDDDDD44444444')).toBe(
      'knowledge_search_44444444',
    );
  });

  it('numbers a tool without an id whose name is taken, within 64 characters', () => {
    const names = new ToolNames();
    expect(names.take('calc__add')).toBe('calc__add');
    expect(names.take('calc__add')).toBe('calc__add_2');
    expect(names.take('calc.add')).toBe('calc_add');
    expect(names.take('calc__add')).toBe('calc__add_3');
    const long = 'y'.repeat(70);
    expect(names.take(long)).toBe('y'.repeat(64));
    expect(names.take(long)).toBe(`${'y'.repeat(62)}_2`);
  });

  it('names a tool whose name has nothing valid by its id, or else `tool`', () => {
    const names = new ToolNames();
    expect(names.take('???', 'pipe_Q1')).toBe('pipe_Q1');
    expect(names.take('???')).toBe('tool');
    expect(names.take('')).toBe('tool_2');
  });
});
