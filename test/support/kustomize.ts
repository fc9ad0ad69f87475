// Renders deploy/kubernetes's kustomizations without kubectl: the subset of kustomize they use —
// `resources` (files, and directories holding a kustomization.yaml), `namespace`, `images`,
// `replicas`, and `patches` of JSON patches (RFC 6902: add, replace, remove) on a target kind and
// name. Any other field fails the render, so a kustomization using more is noticed here rather than
// rendered wrongly. `kubectl kustomize DIR` renders the same objects.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  [field: string]: unknown;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  namespace?: string;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  replicas?: Array<{ name: string; count: number }>;
  patches?: Array<{ path: string; target: { kind: string; name: string } }>;
}

const understood = new Set([
  'apiVersion',
  'kind',
  'resources',
  'namespace',
  'images',
  'replicas',
  'patches',
]);

type JsonPatch = { op: 'add' | 'replace' | 'remove'; path: string; value?: unknown };

function applyPatch(target: unknown, operation: JsonPatch, where: string): void {
  const segments = operation.path
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = segments.pop()!;
  let parent = target as Record<string, unknown> | unknown[];
  for (const segment of segments) {
    const next = (parent as Record<string, unknown>)[segment];
    if (next === undefined || next === null || typeof next !== 'object') {
      throw new Error(`${where}: ${operation.path}: no ${segment}`);
    }
    parent = next as Record<string, unknown> | unknown[];
  }
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (operation.op === 'add') parent.splice(index, 0, operation.value);
    else if (index >= parent.length) throw new Error(`${where}: ${operation.path}: no such item`);
    else if (operation.op === 'replace') parent[index] = operation.value;
    else parent.splice(index, 1);
    return;
  }
  const exists = Object.hasOwn(parent, last);
  if (operation.op !== 'add' && !exists) {
    throw new Error(`${where}: ${operation.op} ${operation.path}: nothing there`);
  }
  if (operation.op === 'remove') delete parent[last];
  else parent[last] = operation.value;
}

function setImages(object: KubernetesObject, images: NonNullable<Kustomization['images']>): void {
  const template = (object.spec?.template as { spec?: { containers?: Array<{ image: string }> } })
    ?.spec;
  for (const container of template?.containers ?? []) {
    const [name, tag] = container.image.split(':') as [string, string | undefined];
    const image = images.find((candidate) => candidate.name === name);
    if (image === undefined) continue;
    container.image = `${image.newName ?? name}:${image.newTag ?? tag ?? 'latest'}`;
  }
}

/** The objects `kubectl kustomize directory` renders, for the subset above. */
export function renderKustomization(directory: string): KubernetesObject[] {
  const file = path.join(directory, 'kustomization.yaml');
  const kustomization = parse(readFileSync(file, 'utf8')) as Kustomization;
  const unknown = Object.keys(kustomization).filter((key) => !understood.has(key));
  if (unknown.length > 0) throw new Error(`${file}: not rendered here: ${unknown.join(', ')}`);
  const objects: KubernetesObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const target = path.join(directory, resource);
    if (existsSync(target) && statSync(target).isDirectory()) {
      objects.push(...renderKustomization(target));
    } else {
      for (const document of parseAllDocuments(readFileSync(target, 'utf8'))) {
        if (document.errors.length > 0)
          throw new Error(`${target}: ${document.errors[0]!.message}`);
        objects.push(document.toJS() as KubernetesObject);
      }
    }
  }
  for (const patch of kustomization.patches ?? []) {
    const where = path.join(directory, patch.path);
    const operations = parse(readFileSync(where, 'utf8')) as JsonPatch[];
    const targets = objects.filter(
      (object) => object.kind === patch.target.kind && object.metadata.name === patch.target.name,
    );
    if (targets.length === 0)
      throw new Error(`${where}: no ${patch.target.kind}/${patch.target.name}`);
    for (const object of targets) {
      for (const operation of operations) applyPatch(object, operation, where);
    }
  }
  for (const { name, count } of kustomization.replicas ?? []) {
    const target = objects.find((object) => object.metadata.name === name && object.spec);
    if (target === undefined) throw new Error(`${file}: replicas: no ${name}`);
    target.spec!.replicas = count;
  }
  if (kustomization.images !== undefined) {
    for (const object of objects) setImages(object, kustomization.images);
  }
  if (kustomization.namespace !== undefined) {
    for (const object of objects) object.metadata.namespace = kustomization.namespace;
  }
  return objects;
}
