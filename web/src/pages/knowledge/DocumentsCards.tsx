// The selected knowledge base's documents, and the form that uploads files into it.
import { Button, Card, FileInput, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queries } from '../../api/queries';
import { formatDate } from '../../components/common';

export function UploadCard({
  uploaded,
  onUpload,
}: {
  uploaded: string | null;
  /** `done` runs once every file is stored, to empty the picker. */
  onUpload: (files: File[], done: () => void) => void;
}) {
  const [files, setFiles] = useState<File[]>([]);

  function submit(event: FormEvent) {
    event.preventDefault();
    onUpload(files, () => setFiles([]));
  }

  return (
    <Card withBorder component="section" aria-labelledby="upload-title">
      <form onSubmit={submit}>
        <Stack>
          <Title order={3} size="h4" id="upload-title">
            Upload documents
          </Title>
          <FileInput
            label="Files"
            description="Text (.txt), Markdown (.md) or HTML (.html)"
            multiple
            accept=".txt,.md,.markdown,.html,.htm,text/plain,text/markdown,text/html"
            value={files}
            onChange={setFiles}
            clearable
          />
          <Group>
            <Button type="submit" disabled={files.length === 0}>
              Upload
            </Button>
            {uploaded && (
              <Text size="sm" role="status">
                {uploaded}
              </Text>
            )}
          </Group>
        </Stack>
      </form>
    </Card>
  );
}

export function DocumentsCard({ knowledgeBaseId }: { knowledgeBaseId: string }) {
  const documents = useQuery(queries.knowledgeDocuments(knowledgeBaseId));
  return (
    <Card withBorder component="section" aria-labelledby="documents-title">
      <Title order={3} size="h4" id="documents-title" mb="xs">
        Documents
      </Title>
      <Table>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Title</Table.Th>
            <Table.Th>Type</Table.Th>
            <Table.Th>Chunks</Table.Th>
            <Table.Th>Embedding</Table.Th>
            <Table.Th>Added</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {documents.data?.documents.map((document) => (
            <Table.Tr key={document.id}>
              <Table.Td>{document.title}</Table.Td>
              <Table.Td>{document.content_type}</Table.Td>
              <Table.Td>{document.chunk_count}</Table.Td>
              <Table.Td>{document.embedding_status}</Table.Td>
              <Table.Td>{formatDate(document.created_at)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}
