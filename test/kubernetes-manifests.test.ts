// deploy/kubernetes, rendered as `kubectl apply -k` would (test/support/kustomize.ts) for the base
// and the production overlay, with no cluster: every object passes the Kubernetes API's schemas
// (kubernetes-models' validators, generated from the API's OpenAPI document), and the parts fit
// together: selectors match the pod labels, the probes ask the service's own routes, the Secrets
// are referenced and never defined, the config file parses as the service's configuration.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config/load-config.js';
import { renderKustomization, type KubernetesObject } from './support/kustomize.js';
import { repositoryRoot } from './support/process.js';

const variants = {
  base: path.join(repositoryRoot, 'deploy/kubernetes/base'),
  production: path.join(repositoryRoot, 'deploy/kubernetes/overlays/production'),
};

/** The validator of one kind, from kubernetes-models (`apps/v1` → `kubernetes-models/apps/v1/…`). */
type Validated = { validate(): void };
type ModelClass = new (data: unknown) => Validated;

async function modelOf(object: KubernetesObject): Promise<ModelClass> {
  const specifier = `kubernetes-models/${object.apiVersion}/${object.kind}`;
  const module = (await import(/* @vite-ignore */ specifier)) as Record<string, ModelClass>;
  const model = module[object.kind];
  if (model === undefined) throw new Error(`${specifier} exports no ${object.kind}`);
  return model;
}

type Container = {
  image: string;
  env: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string } } }>;
  envFrom?: Array<{ secretRef?: { name: string } }>;
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
};

const byKind = (objects: KubernetesObject[], kind: string) => {
  const found = objects.filter((object) => object.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};

describe.each(Object.entries(variants))('deploy/kubernetes: %s', (_name, directory) => {
  const objects = renderKustomization(directory);

  it('renders a Deployment, Service, ConfigMap, HPA and PDB, and no Secret', () => {
    expect(objects.map((object) => object.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Service',
    ]);
  });

  it('passes the Kubernetes schemas, object by object (and a broken one would not)', async () => {
    for (const object of objects) {
      const Model = await modelOf(object);
      expect(
        () => new Model(object).validate(),
        `${object.kind}/${object.metadata.name}`,
      ).not.toThrow();
    }
    const deployment = byKind(objects, 'Deployment');
    const Model = await modelOf(deployment);
    const broken = { ...deployment, spec: { ...deployment.spec, replicas: 'three' } };
    expect(() => new Model(broken).validate()).toThrow();
  });

  it('fits together: selectors, targets, probes, secrets and the config file', () => {
    const deployment = byKind(objects, 'Deployment');
    const spec = deployment.spec as {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } };
    };
    const labels = spec.template.metadata.labels;
    expect(labels).toMatchObject(spec.selector.matchLabels);
    for (const kind of ['Service', 'PodDisruptionBudget']) {
      const selector = byKind(objects, kind).spec!.selector as Record<string, unknown>;
      expect(labels).toMatchObject((selector.matchLabels ?? selector) as Record<string, string>);
    }
    expect(byKind(objects, 'HorizontalPodAutoscaler').spec!.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    const [container] = spec.template.spec.containers as [Container];
    expect(container.image).toMatch(/conversational-ai-platform:\d+\.\d+\.\d+$/);
    expect(container.readinessProbe.httpGet).toEqual({ path: '/v1/health', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/', port: 'http' });
    const secretVariables = container.env.filter((variable) => variable.valueFrom?.secretKeyRef);
    expect(secretVariables.map((variable) => variable.name)).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'API_KEY_SECRET']),
    );
    expect(
      container.env.every(
        (variable) => !/KEY|SECRET|URL/.test(variable.name) || variable.valueFrom,
      ),
    ).toBe(true);
    const file = byKind(objects, 'ConfigMap').data as Record<string, string>;
    const config = loadConfig({
      env: {
        DATABASE_URL: 'postgres://platform@db:5432/platform',
        REDIS_URL: 'redis://cache:6379',
      },
      overrides: parse(file['platform.yaml']!) as Record<string, unknown>,
    });
    expect(config.server.port).toBe(8080);
  });
});

describe('deploy/kubernetes: the production overlay', () => {
  const objects = renderKustomization(variants.production);

  it('puts everything in its namespace, pins the image and scales from three pods', () => {
    expect(new Set(objects.map((object) => object.metadata.namespace))).toEqual(
      new Set(['platform']),
    );
    const deployment = byKind(objects, 'Deployment');
    expect(deployment.spec!.replicas).toBe(3);
    expect(byKind(objects, 'HorizontalPodAutoscaler').spec).toMatchObject({
      minReplicas: 3,
      maxReplicas: 12,
    });
    expect(byKind(objects, 'PodDisruptionBudget').spec).toEqual(
      expect.objectContaining({ minAvailable: 2 }),
    );
    const containers = (deployment.spec!.template as { spec: { containers: Container[] } }).spec
      .containers;
    expect(containers[0]!.image).toBe('registry.example.com/conversational-ai-platform:0.1.0');
    expect(containers[0]!.env).toContainEqual({ name: 'TRUST_PROXY', value: '10.0.0.0/8' });
  });
});
