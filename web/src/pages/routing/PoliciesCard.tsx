// The routing policies: each with its definition and a delete button, and a new one as JSON, which
// starts as an example that can be saved as it stands.
import { Button, Card, Code, Group, Stack, Table, Textarea, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queries } from '../../api/queries';

type CatalogModel = { name: string; type: string; available: boolean; default: boolean };

/**
 * An example policy that can be saved as it stands: it routes to a chat model of the catalog the
 * API reports (the default one, else the first available, else the first); without a chat model it
 * caps max_tokens instead.
 */
function examplePolicy(models: readonly CatalogModel[]): string {
  const chat = models.filter((model) => model.type === 'chat');
  const model =
    chat.find((model) => model.default) ?? chat.find((model) => model.available) ?? chat[0];
  const policy =
    model === undefined
      ? {
          name: 'short answers to greetings',
          priority: 10,
          conditions: { intent_categories: ['GREETING'] },
          actions: { max_tokens: 200 },
        }
      : {
          name: `code questions go to ${model.name}`,
          priority: 10,
          conditions: { intent_categories: ['CODE'] },
          actions: { route_to: { type: 'model', target: model.name } },
        };
  return JSON.stringify(policy, null, 2);
}

export function PoliciesCard({
  enabled,
  onCreate,
  onDelete,
}: {
  enabled: boolean | undefined;
  onCreate: (definition: string) => void;
  onDelete: (id: string) => void;
}) {
  const models = useQuery(queries.models());
  const policies = useQuery({ ...queries.routingPolicies(), enabled: enabled === true });
  // null until edited: the example, once the catalog has loaded.
  const [policyText, setPolicyText] = useState<string | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    onCreate(policyText ?? examplePolicy(models.data?.models ?? []));
  }

  return (
    <Card withBorder component="section" aria-labelledby="policies-title">
      <Stack>
        <Title order={3} size="h4" id="policies-title">
          Policies
        </Title>
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Policy</Table.Th>
              <Table.Th>Definition</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(enabled === true ? (policies.data ?? []) : []).map((policy) => (
              <Table.Tr key={policy.id}>
                <Table.Td>{policy.name}</Table.Td>
                <Table.Td>
                  <Code block>{JSON.stringify(policy, null, 2)}</Code>
                </Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    color="red.9"
                    variant="outline"
                    onClick={() => onDelete(policy.id)}
                  >
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <form onSubmit={submit}>
          <Stack>
            <Textarea
              label="New policy (JSON)"
              autosize
              minRows={6}
              value={policyText ?? (models.data ? examplePolicy(models.data.models) : '')}
              onChange={(event) => setPolicyText(event.currentTarget.value)}
            />
            <Group>
              <Button type="submit" disabled={enabled !== true}>
                Create policy
              </Button>
            </Group>
          </Stack>
        </form>
      </Stack>
    </Card>
  );
}
