// Reads a V8 heap snapshot (.heapsnapshot) into counts and sizes per kind of object — the
// constructor's name for objects, closures' function names, the type for strings and the rest —
// and compares two of them: what grew between "before traffic" and "after traffic and idle".
import { readFileSync } from 'node:fs';

export interface HeapGroup {
  /** `object Foo`, `closure bar`, `string`, `native …`, … */
  name: string;
  count: number;
  selfBytes: number;
}

interface SnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Types whose node names are worth keeping apart (the rest are grouped by type alone). */
const namedTypes = new Set(['object', 'closure', 'native', 'hidden', 'object shape', 'code']);

export function summariseHeapSnapshot(file: string): Map<string, HeapGroup> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as SnapshotJson;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const groups = new Map<string, HeapGroup>();
  const { nodes, strings } = snapshot;
  for (let offset = 0; offset < nodes.length; offset += width) {
    const type = types[nodes[offset + typeAt]!] ?? 'unknown';
    let name = type;
    if (namedTypes.has(type)) {
      const text = strings[nodes[offset + nameAt]!] ?? '';
      // Closures and code may carry long source-derived names; keep the first line, shortened.
      name = `${type} ${text.split('\n')[0]!.slice(0, 80)}`;
    }
    let group = groups.get(name);
    if (group === undefined) {
      group = { name, count: 0, selfBytes: 0 };
      groups.set(name, group);
    }
    group.count += 1;
    group.selfBytes += nodes[offset + sizeAt]!;
  }
  return groups;
}

export interface HeapGrowth {
  name: string;
  countBefore: number;
  countAfter: number;
  bytesBefore: number;
  bytesAfter: number;
}

/** The groups that grew most in retained self size from `before` to `after`. */
export function compareHeapSnapshots(
  before: Map<string, HeapGroup>,
  after: Map<string, HeapGroup>,
  top = 20,
): HeapGrowth[] {
  const rows: HeapGrowth[] = [];
  for (const [name, group] of after) {
    const earlier = before.get(name);
    rows.push({
      name,
      countBefore: earlier?.count ?? 0,
      countAfter: group.count,
      bytesBefore: earlier?.selfBytes ?? 0,
      bytesAfter: group.selfBytes,
    });
  }
  return rows
    .sort((a, b) => b.bytesAfter - b.bytesBefore - (a.bytesAfter - a.bytesBefore))
    .slice(0, top);
}
