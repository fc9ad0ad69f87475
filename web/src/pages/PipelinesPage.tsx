// Pipelines of the account, each opening in the visual editor.
import { Anchor, Button, Card, Group, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { queries } from '../api/queries';
import { ErrorAlert, Page, formatDate } from '../components/common';

export default function PipelinesPage() {
  const pipelines = useQuery(queries.pipelines());
  return (
    <Page title="Pipelines">
      <Group>
        <Button component={Link} to="/pipelines/new">
          New pipeline
        </Button>
      </Group>
      <ErrorAlert error={pipelines.error} />
      <Card withBorder>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Stages</Table.Th>
              <Table.Th>Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {pipelines.data?.pipelines.map((pipeline) => (
              <Table.Tr key={pipeline.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/pipelines/${pipeline.id}`}>
                    {pipeline.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{pipeline.stage_count}</Table.Td>
                <Table.Td>{formatDate(pipeline.updated_at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        {pipelines.data?.pipelines.length === 0 && <Text size="sm">No pipelines yet.</Text>}
      </Card>
    </Page>
  );
}
